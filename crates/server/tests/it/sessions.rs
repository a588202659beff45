//! Signing in from a browser: passwords, sessions in cookies, CSRF tokens on writes, sessions
//! listed and ended, failed sign-ins slowed, a new password and a new API key from the account.

use mgds_server::admin::Role;
use mgds_server::store::sessions;
use reqwest::header::{CONTENT_TYPE, COOKIE, SET_COOKIE};

use super::*;

const PASSWORD: &str = "a long enough passphrase";

/// A browser signed in: its cookie and the session's CSRF token.
struct Browser {
    cookie: String,
    csrf: String,
    session: String,
}

impl Browser {
    fn req(&self, svc: &Service, method: Method, path: &str) -> RequestBuilder {
        svc.req(method, path).header(COOKIE, &self.cookie)
    }

    /// A write as the page makes it: the cookie and the CSRF token.
    fn write(&self, svc: &Service, method: Method, path: &str) -> RequestBuilder {
        self.req(svc, method, path).header("x-csrf-token", &self.csrf)
    }
}

async fn with_password(svc: &Service, email: &str) -> TestUser {
    let user = svc.user(email).await;
    sessions::set_password(&svc.state.db, None, &user.id, PASSWORD).await.unwrap().unwrap();
    user
}

async fn try_sign_in(svc: &Service, email: &str, password: &str) -> Response {
    svc.req(Method::POST, "/api/v1/sign_in")
        .json(&json!({ "email": email, "password": password }))
        .header("user-agent", "Test browser")
        .send()
        .await
        .unwrap()
}

async fn sign_in(svc: &Service, email: &str) -> Browser {
    let r = try_sign_in(svc, email, PASSWORD).await;
    let set = r.headers().get(SET_COOKIE).expect("a session cookie").to_str().unwrap().to_string();
    let (s, body) = json_of(r).await;
    assert_eq!(s, 200, "{body}");
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(set.contains(attribute), "{attribute} in {set}");
    }
    assert!(!set.contains("Secure"), "no Secure flag over plain HTTP: {set}");
    let cookie = set.split(';').next().unwrap().to_string();
    Browser {
        cookie,
        csrf: body["csrf_token"].as_str().unwrap().to_string(),
        session: body["session"].as_str().unwrap().to_string(),
    }
}

#[tokio::test]
async fn a_browser_signs_in_reads_and_writes_with_its_token() {
    let svc = Service::start().await;
    let user = with_password(&svc, "reader@lab.example.org").await;
    let b = sign_in(&svc, "Reader@Lab.example.org").await;
    let (s, me) = json_of(b.req(&svc, Method::GET, "/api/v1/session").send().await.unwrap()).await;
    assert_eq!(s, 200);
    assert_eq!(me["user"]["email"], "reader@lab.example.org");
    assert_eq!(me["csrf_token"].as_str(), Some(b.csrf.as_str()));
    let (s, account) = json_of(b.req(&svc, Method::GET, "/api/v1/account").send().await.unwrap()).await;
    assert_eq!((s, &account["email"]), (200, &json!("reader@lab.example.org")));
    // A write with the cookie alone (what another site's form or script can make) is refused.
    let project = json!({ "project_name": "browser_p", "name": "From the browser" });
    let (s, body) = json_of(b.req(&svc, Method::POST, "/api/v1/projects").json(&project).send().await.unwrap()).await;
    assert_error(s, &body, 403);
    assert!(body["message"].as_str().unwrap().contains("X-CSRF-Token"), "{body}");
    let forged = b.req(&svc, Method::POST, "/api/v1/projects").header("x-csrf-token", "0".repeat(64));
    let (s, body) = json_of(forged.json(&project).send().await.unwrap()).await;
    assert_error(s, &body, 403);
    // With the token, it is made, as the user.
    let (s, project) =
        json_of(b.write(&svc, Method::POST, "/api/v1/projects").json(&project).send().await.unwrap()).await;
    assert_eq!(s, 200, "{project}");
    let id = project["$uri"].as_str().unwrap().rsplit('/').next().unwrap();
    let (s, seen) = svc.get(Some(&user), &format!("/api/v1/projects/{id}")).await;
    assert_eq!(s, 200, "{seen}");
    // API keys keep working as before, with no token.
    let (s, body) = svc.post(Some(&user), "/api/v1/projects", json!({ "project_name": "script_p" })).await;
    assert_eq!(s, 200, "{body}");
    // Every method that writes needs the token, DELETE too.
    let r = b.req(&svc, Method::DELETE, &format!("/api/v1/projects/{id}")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403);
    // A page's 401 carries no Basic challenge (the browser would ask for a key in a dialog of its
    // own); a script's does.
    let r = svc.req(Method::GET, "/api/v1/account").header("x-requested-with", "mgds").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert!(r.headers().get("www-authenticate").is_none());
    let r = svc.req(Method::GET, "/api/v1/account").send().await.unwrap();
    assert!(r.headers().get("www-authenticate").is_some());
    // Two session cookies (one planted by a neighbouring site for a narrower path) are refused.
    let twice = format!("{}; mgds_session={}", b.cookie, "a".repeat(64));
    let r = svc.req(Method::GET, "/api/v1/account").header(COOKIE, twice).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    // Signing out ends the session; the cookie then reads nothing.
    let r = b.write(&svc, Method::DELETE, "/api/v1/session").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    assert!(r.headers()[SET_COOKIE].to_str().unwrap().contains("Max-Age=0"));
    let (s, _) = json_of(b.req(&svc, Method::GET, "/api/v1/session").send().await.unwrap()).await;
    assert_eq!(s, 401);
    let (s, _) = json_of(b.req(&svc, Method::GET, "/api/v1/account").send().await.unwrap()).await;
    assert_eq!(s, 401);
}

#[tokio::test]
async fn a_sign_in_must_be_json_and_right() {
    let svc = Service::start().await;
    with_password(&svc, "typo@lab.example.org").await;
    let (s, body) = json_of(try_sign_in(&svc, "typo@lab.example.org", "not the password").await).await;
    assert_error(s, &body, 401);
    let (s, body) = json_of(try_sign_in(&svc, "nobody@lab.example.org", PASSWORD).await).await;
    assert_error(s, &body, 401);
    // An account without a password has no browser sign-in.
    svc.user("keyonly@lab.example.org").await;
    let (s, _) = json_of(try_sign_in(&svc, "keyonly@lab.example.org", "").await).await;
    assert_eq!(s, 401);
    // A form post (what another site can make a browser send) is not a sign-in.
    let form = svc
        .req(Method::POST, "/api/v1/sign_in")
        .header(CONTENT_TYPE, "text/plain")
        .body(json!({ "email": "typo@lab.example.org", "password": PASSWORD }).to_string())
        .send()
        .await
        .unwrap();
    let (s, body) = json_of(form).await;
    assert_error(s, &body, 400);
}

#[tokio::test]
async fn failed_sign_ins_wait_longer_and_longer_but_never_lock_the_account() {
    let svc = Service::start().await;
    with_password(&svc, "guessed@lab.example.org").await;
    for _ in 0..sessions::FREE_FAILURES_PER_PAIR + 1 {
        let (s, _) = json_of(try_sign_in(&svc, "guessed@lab.example.org", "wrong guess").await).await;
        assert_eq!(s, 401);
    }
    // Now even the right password waits (checked before the password, so a guess learns nothing).
    let r = try_sign_in(&svc, "guessed@lab.example.org", PASSWORD).await;
    assert_eq!(r.status().as_u16(), 429);
    let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&wait), "{wait}");
    // Another account from the same address is not held up by this one's failures.
    with_password(&svc, "colleague@lab.example.org").await;
    sign_in(&svc, "colleague@lab.example.org").await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    sign_in(&svc, "guessed@lab.example.org").await;
    // The count started again with the success: two more failures cost no wait.
    for _ in 0..2 {
        let (s, _) = json_of(try_sign_in(&svc, "guessed@lab.example.org", "wrong guess").await).await;
        assert_eq!(s, 401);
    }
}

#[tokio::test]
async fn guesses_sent_at_once_do_not_all_pass_one_check() {
    let svc = Service::start().await;
    with_password(&svc, "burst@lab.example.org").await;
    let guesses = (0..16).map(|i| {
        let svc = &svc;
        async move { try_sign_in(svc, "burst@lab.example.org", &format!("guess number {i}")).await.status().as_u16() }
    });
    let answers = futures::future::join_all(guesses).await;
    let checked = answers.iter().filter(|s| **s == 401).count() as i64;
    assert!(answers.iter().all(|s| *s == 401 || *s == 429), "{answers:?}");
    // Each turn checks the wait and counts its failure before the next takes it: past the free
    // failures, at most the turns taken at once can be checked before the wait shows.
    let most = sessions::FREE_FAILURES_PER_PAIR + sessions::HASHING_AT_ONCE as i64;
    assert!((sessions::FREE_FAILURES_PER_PAIR + 1..=most).contains(&checked), "{answers:?}");
}

#[tokio::test]
async fn sessions_are_listed_and_ended_one_by_one_or_everywhere() {
    let svc = Service::start().await;
    with_password(&svc, "many@lab.example.org").await;
    let laptop = sign_in(&svc, "many@lab.example.org").await;
    let desktop = sign_in(&svc, "many@lab.example.org").await;
    let third = sign_in(&svc, "many@lab.example.org").await;
    let (s, list) = json_of(laptop.req(&svc, Method::GET, "/api/v1/sessions").send().await.unwrap()).await;
    assert_eq!(s, 200);
    let list = list.as_array().unwrap().clone();
    assert_eq!(list.len(), 3);
    assert_eq!(list.iter().filter(|s| s["current"] == json!(true)).count(), 1);
    assert!(list.iter().all(|s| s["user_agent"] == "Test browser" && s["address"] == "127.0.0.1"), "{list:?}");
    // The laptop ends the desktop's session: the desktop is signed out at once.
    let r = laptop.write(&svc, Method::DELETE, &format!("/api/v1/sessions/{}", desktop.session)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let (s, _) = json_of(desktop.req(&svc, Method::GET, "/api/v1/session").send().await.unwrap()).await;
    assert_eq!(s, 401);
    // Another user cannot end this user's sessions, nor learn they exist.
    with_password(&svc, "other@lab.example.org").await;
    let other = sign_in(&svc, "other@lab.example.org").await;
    let r = other.write(&svc, Method::DELETE, &format!("/api/v1/sessions/{}", third.session)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    // Signing out everywhere ends the rest.
    let (s, ended) = json_of(laptop.write(&svc, Method::DELETE, "/api/v1/sessions").send().await.unwrap()).await;
    assert_eq!(s, 200);
    assert_eq!(ended["ended"], 2);
    for b in [&laptop, &third] {
        let (s, _) = json_of(b.req(&svc, Method::GET, "/api/v1/session").send().await.unwrap()).await;
        assert_eq!(s, 401);
    }
    let (s, _) = json_of(other.req(&svc, Method::GET, "/api/v1/session").send().await.unwrap()).await;
    assert_eq!(s, 200, "another user's session goes on");
}

#[tokio::test]
async fn a_new_password_needs_the_old_and_ends_every_session() {
    let svc = Service::start().await;
    with_password(&svc, "changer@lab.example.org").await;
    let b = sign_in(&svc, "changer@lab.example.org").await;
    let other = sign_in(&svc, "changer@lab.example.org").await;
    let change = |current: &str, new: &str| {
        b.write(&svc, Method::POST, "/api/v1/account/password")
            .json(&json!({ "current_password": current, "new_password": new }))
    };
    let (s, body) = json_of(change("not it", "another long passphrase").send().await.unwrap()).await;
    assert_error(s, &body, 403);
    let (s, body) = json_of(change(PASSWORD, "short").send().await.unwrap()).await;
    assert_error(s, &body, 400);
    let r = change(PASSWORD, "another long passphrase").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    for x in [&b, &other] {
        let (s, _) = json_of(x.req(&svc, Method::GET, "/api/v1/session").send().await.unwrap()).await;
        assert_eq!(s, 401);
    }
    let (s, _) = json_of(try_sign_in(&svc, "changer@lab.example.org", PASSWORD).await).await;
    assert_eq!(s, 401);
    let (s, _) = json_of(try_sign_in(&svc, "changer@lab.example.org", "another long passphrase").await).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn an_organisation_admin_sets_a_members_password_and_nobody_elses() {
    let svc = Service::start().await;
    let admin = svc.user_in("admin@a.example.org", Some("Lab A"), Role::Admin).await;
    let member = svc.user_in("member@a.example.org", Some("Lab A"), Role::Member).await;
    let peer = svc.user_in("peer@a.example.org", Some("Lab A"), Role::Member).await;
    let outsider = svc.user_in("outsider@b.example.org", Some("Lab B"), Role::Member).await;
    let set = |by: &TestUser, whom: &TestUser| {
        svc.as_user(Some(by), Method::POST, &format!("/api/v1/users/{}/password", whom.id))
            .json(&json!({ "new_password": "set by the admin, long" }))
            .send()
    };
    let r = set(&admin, &member).await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let (s, _) = json_of(try_sign_in(&svc, "member@a.example.org", "set by the admin, long").await).await;
    assert_eq!(s, 200);
    let (s, body) = json_of(set(&peer, &member).await.unwrap()).await;
    assert_error(s, &body, 403);
    let (s, body) = json_of(set(&admin, &outsider).await.unwrap()).await;
    assert_error(s, &body, 404);
    // Not their own (that needs the current password), nor another admin's.
    let (s, body) = json_of(set(&admin, &admin).await.unwrap()).await;
    assert_error(s, &body, 400);
    let other_admin = svc.user_in("admin2@a.example.org", Some("Lab A"), Role::Admin).await;
    let (s, body) = json_of(set(&admin, &other_admin).await.unwrap()).await;
    assert_error(s, &body, 403);
}

#[tokio::test]
async fn the_account_page_makes_a_new_key_and_the_old_one_stops() {
    let svc = Service::start().await;
    let user = with_password(&svc, "rotator@lab.example.org").await;
    let b = sign_in(&svc, "rotator@lab.example.org").await;
    // A session alone (perhaps a stolen one) does not make a key that would outlive it.
    let (s, body) = json_of(b.write(&svc, Method::POST, "/api/v1/account/api_key").send().await.unwrap()).await;
    assert_error(s, &body, 403);
    let ask = |password: &str| {
        b.write(&svc, Method::POST, "/api/v1/account/api_key").json(&json!({ "current_password": password })).send()
    };
    let (s, body) = json_of(ask("not the password").await.unwrap()).await;
    assert_error(s, &body, 403);
    let (s, made) = json_of(ask(PASSWORD).await.unwrap()).await;
    assert_eq!(s, 200, "{made}");
    let key = made["api_key"].as_str().unwrap();
    assert_eq!(key.len(), 32);
    let (s, _) = svc.get(Some(&user), "/api/v1/account").await;
    assert_eq!(s, 401, "the old key stops at once");
    let fresh = TestUser { key: key.to_string(), ..user };
    let (s, _) = svc.get(Some(&fresh), "/api/v1/account").await;
    assert_eq!(s, 200);
    // The browser stays signed in.
    let (s, _) = json_of(b.req(&svc, Method::GET, "/api/v1/session").send().await.unwrap()).await;
    assert_eq!(s, 200);
}
