//! Colleagues as the screens name them: by e-mail address. An account is found by its exact
//! address (the only way the service lets one user find another), and the user ids on
//! documents and projects are shown as the addresses of the people the user may see.

use std::collections::{HashMap, HashSet};

use mgds_client::{Client, Filter};
use serde::Serialize;
use ts_rs::TS;

use crate::error::{CmdError, CmdResult};
use crate::samples::id_of;

/// A person, as a screen shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct Person {
    /// Their user id.
    pub id: String,
    /// Their e-mail address, when the service shows it to the user.
    pub email: Option<String>,
    /// Whether this is the signed-in user.
    pub me: bool,
}

/// The signed-in user: their id and e-mail address.
#[derive(Debug, Clone)]
pub struct Me {
    /// User id.
    pub id: String,
    /// E-mail address.
    pub email: Option<String>,
}

/// Who is signed in.
pub async fn me(client: &Client) -> CmdResult<Me> {
    let a = client.account().await?;
    Ok(Me { id: a.user.id().to_string(), email: a.email })
}

/// How many user ids one lookup names (each id is about 30 characters of the address).
const LOOKUP_CHUNK: usize = 200;

/// The e-mail addresses of `ids`, for those the user may see (the others are left out).
pub async fn emails(client: &Client, ids: impl IntoIterator<Item = String>) -> CmdResult<HashMap<String, String>> {
    let ids: Vec<String> = ids.into_iter().collect::<HashSet<_>>().into_iter().collect();
    let mut out = HashMap::new();
    for chunk in ids.chunks(LOOKUP_CHUNK) {
        let uris: Vec<String> = chunk.iter().map(|id| format!("/api/v1/users/{id}")).collect();
        let users = client
            .users()
            .list()
            .filter(Filter::new().is_in("$uri", uris))
            .per_page(u32::try_from(chunk.len()).unwrap_or(1).max(1))
            .send()
            .await?;
        for u in users.items {
            if let Some(email) = u.email {
                out.insert(id_of(&u.uri), email);
            }
        }
    }
    Ok(out)
}

/// `id` as a [`Person`], with the address from `emails`.
pub fn person(id: &str, emails: &HashMap<String, String>, me: &Me) -> Person {
    let email = emails.get(id).cloned().or_else(|| (id == me.id).then(|| me.email.clone()).flatten());
    Person { id: id.to_string(), email, me: id == me.id }
}

/// An e-mail address as typed, checked for its shape (the service compares the whole address,
/// without regard to case).
pub fn check_email(email: &str) -> CmdResult<String> {
    let e = email.trim();
    let shaped = e.split_once('@').is_some_and(|(user, host)| {
        !user.is_empty() && host.contains('.') && !host.starts_with('.') && !host.ends_with('.')
    }) && !e.contains(char::is_whitespace);
    if shaped {
        Ok(e.to_string())
    } else if e.is_empty() {
        Err(CmdError::new("invalid", "Type your colleague's e-mail address, for example anna@lab.example.org."))
    } else {
        Err(CmdError::new(
            "invalid",
            format!("“{e}” is not an e-mail address; type the whole address, for example anna@lab.example.org."),
        ))
    }
}

/// The user id of the account with exactly this e-mail address, for sharing with them.
pub async fn find(client: &Client, email: &str, me: &Me) -> CmdResult<String> {
    let email = check_email(email)?;
    if me.email.as_deref().is_some_and(|m| m.eq_ignore_ascii_case(&email)) {
        return Err(CmdError::new(
            "invalid",
            "That is your own address. Type the address of the colleague you want to share with.",
        ));
    }
    match client.users().find_by_email(&email).await {
        Ok(Some(user)) => Ok(id_of(&user.uri)),
        Ok(None) => Err(CmdError::new(
            "no_account",
            format!(
                "Nobody on this service has the address {email}. Check the spelling; a colleague without an \
                 account asks whoever runs the service to make one, then you can share with them."
            ),
        )),
        Err(mgds_client::Error::RateLimited { .. }) => Err(CmdError::new(
            "busy",
            "Too many addresses that have no account were tried in the last few minutes. Wait five minutes, \
             check the address, and try again.",
        )),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_for_their_shape() {
        assert_eq!(check_email("  anna@lab.example.org ").unwrap(), "anna@lab.example.org");
        assert_eq!(check_email("").unwrap_err().code, "invalid");
        let e = check_email("anna").unwrap_err();
        assert!(e.message.contains("“anna” is not an e-mail address"), "{}", e.message);
        assert!(check_email("anna@lab").is_err());
        assert!(check_email("anna smith@lab.org").is_err());
    }

    #[test]
    fn a_person_is_named_by_their_address() {
        let me = Me { id: "a".into(), email: Some("me@local.mgds".into()) };
        let emails = HashMap::from([("b".to_string(), "b@lab.org".to_string())]);
        assert_eq!(person("b", &emails, &me), Person { id: "b".into(), email: Some("b@lab.org".into()), me: false });
        assert_eq!(person("a", &emails, &me).email.as_deref(), Some("me@local.mgds"));
        assert!(person("a", &emails, &me).me);
        assert_eq!(person("c", &emails, &me).email, None);
    }
}
