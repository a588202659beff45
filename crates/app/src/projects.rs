//! The Projects screen: the user's own projects, those they are a member of and the public ones;
//! creating one (its short name checked first), renaming, describing, making it public or
//! private, members added by e-mail and taken off, and deleting it (its samples stay with their
//! owners, out of any project). A project's samples open in the samples table, filtered to it.

use mgds_api::{PROJECT_PERMISSIONS, Project, Ref};
use mgds_client::{Client, Filter, Sort};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{CmdError, CmdResult};
use crate::people::{self, Me, Person};
use crate::samples::{Named, id_of};

/// How the signed-in user relates to a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// They own it: they may change it and its members.
    Owner,
    /// They were added to it.
    Member,
    /// It is public; they may see its samples.
    Public,
}

/// One project on the screen.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ProjectRow {
    /// Its id.
    pub id: String,
    /// Its short name (3 to 15 of letters, digits, `-`, `_`).
    pub short_name: String,
    /// Its display name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// Whether anyone may see it.
    pub public: bool,
    /// Who owns it.
    pub owner: Person,
    /// How the signed-in user relates to it.
    pub role: Role,
    /// What the signed-in user may do in it (`can_see_files`, `can_add_files`, ...).
    pub permissions: Vec<String>,
}

/// One member of a project.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Member {
    /// The person.
    pub person: Person,
    /// Whether they own the project.
    pub owner: bool,
    /// What they may do.
    pub permissions: Vec<String>,
}

/// A project opened on its page.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ProjectDetail {
    /// The project.
    pub project: ProjectRow,
    /// Its members, the owner first; `None` when the service shows them only to its people
    /// (a public project the user is not in).
    pub members: Option<Vec<Member>>,
    /// How many of its samples the user can see.
    pub samples: u64,
}

/// What the window sends to create a project.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct NewProject {
    /// Short name: 3 to 15 letters, digits, `-` or `_`, unique in the organisation.
    pub short_name: String,
    /// Display name (default: the short name).
    #[serde(default)]
    pub name: Option<String>,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether anyone may see it.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub public: bool,
}

/// A change to a project from its page.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct ProjectChange {
    /// New short name.
    #[serde(default)]
    pub short_name: Option<String>,
    /// New display name.
    #[serde(default)]
    pub name: Option<String>,
    /// New description (an empty one clears it).
    #[serde(default)]
    pub description: Option<String>,
    /// Make it public (or private).
    #[serde(default)]
    pub public: Option<bool>,
}

/// What a new member may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// See, add samples, edit their metadata and tags, download files.
    Full,
    /// See and download only.
    View,
}

impl Access {
    fn permissions(self) -> Vec<String> {
        match self {
            Access::Full => PROJECT_PERMISSIONS.iter().map(|p| p.to_string()).collect(),
            Access::View => vec!["can_see_files".into(), "can_download_files".into()],
        }
    }
}

/// Why `name` cannot be a project's short name, in words; `None` when it can.
pub fn short_name_problem(name: &str) -> Option<String> {
    let n = name.trim();
    let len = n.chars().count();
    if !(3..=15).contains(&len) {
        return Some(format!("A project's short name has 3 to 15 characters; “{n}” has {len}."));
    }
    if n.chars().any(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
        return Some(format!("A project's short name uses only letters, digits, - and _ (no spaces); “{n}” does not."));
    }
    None
}

fn check_short_name(name: &str) -> CmdResult<String> {
    match short_name_problem(name) {
        Some(why) => Err(CmdError::new("invalid", why)),
        None => Ok(name.trim().to_string()),
    }
}

fn check_name(name: &str) -> CmdResult<String> {
    let n = name.trim();
    match n.chars().count() {
        0 => Err(CmdError::new("invalid", "Give the project a name, for example “Outbreak 7, March 2026”.")),
        1..=60 => Ok(n.to_string()),
        len => {
            Err(CmdError::new("invalid", format!("A project's name has at most 60 characters; this one has {len}.")))
        }
    }
}

/// A taken short name, in words.
fn taken(e: mgds_client::Error, short_name: &str) -> CmdError {
    match e {
        mgds_client::Error::Conflict { .. } => CmdError::new(
            "conflict",
            format!("A project called {short_name} already exists in your organisation; choose another short name."),
        ),
        other => other.into(),
    }
}

fn row(p: &Project, me: &Me, owner: Person) -> ProjectRow {
    let role = if p.owner.id() == me.id {
        Role::Owner
    } else if !p.permissions.is_empty() {
        Role::Member
    } else {
        Role::Public
    };
    ProjectRow {
        id: id_of(&p.uri),
        short_name: p.project_name.clone().unwrap_or_else(|| p.name.clone()),
        name: p.name.clone(),
        description: p.description.clone().filter(|d| !d.trim().is_empty()),
        public: p.public,
        owner,
        role,
        permissions: p.permissions.clone(),
    }
}

/// Every project the user can see: their own, those they are in, the public ones; by name.
pub async fn list(client: &Client) -> CmdResult<Vec<ProjectRow>> {
    let me = people::me(client).await?;
    let projects =
        client.projects().list().sort(Sort::asc("project_name")).per_page(mgds_api::MAX_PER_PAGE).all().await?;
    let emails = people::emails(client, projects.iter().map(|p| p.owner.id().to_string()).collect::<Vec<_>>()).await?;
    let mut rows: Vec<ProjectRow> =
        projects.iter().map(|p| row(p, &me, people::person(p.owner.id(), &emails, &me))).collect();
    rows.sort_by_key(|r| r.short_name.to_lowercase());
    Ok(rows)
}

/// Project `id` with its members and the number of its samples.
pub async fn detail(client: &Client, id: &str) -> CmdResult<ProjectDetail> {
    let me = people::me(client).await?;
    let project_ref = Ref::new("projects", id);
    let projects = client.projects();
    let (project, members, count) = tokio::join!(
        projects.get(id),
        projects.members(id),
        client.samples().list().filter(Filter::new().eq_ref("project", &project_ref)).per_page(1).send()
    );
    let project = project?;
    let members = match members {
        Ok(m) => Some(m),
        // Only its people see who belongs to a project.
        Err(mgds_client::Error::Forbidden { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let mut ids = vec![project.owner.id().to_string()];
    ids.extend(members.iter().flatten().map(|m| m.user.id().to_string()));
    let emails = people::emails(client, ids).await?;
    let owner = people::person(project.owner.id(), &emails, &me);
    let members = members.map(|ms| {
        ms.iter()
            .map(|m| Member {
                person: people::person(m.user.id(), &emails, &me),
                owner: m.user.id() == project.owner.id(),
                permissions: m.permissions.clone(),
            })
            .collect()
    });
    let page = count?;
    Ok(ProjectDetail {
        project: row(&project, &me, owner),
        members,
        samples: page.total.unwrap_or(page.items.len() as u64),
    })
}

/// Creates a project; its short name is checked before anything is sent.
pub async fn create(client: &Client, new: NewProject) -> CmdResult<Named> {
    let short = check_short_name(&new.short_name)?;
    let mut req = client.projects().create(short.clone());
    if let Some(name) = new.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        req = req.name(check_name(name)?);
    }
    if let Some(d) = new.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        req = req.description(d);
    }
    if new.public {
        req = req.public(true);
    }
    let p = req.send().await.map_err(|e| taken(e, &short))?;
    Ok(Named { id: id_of(&p.uri), name: p.project_name.unwrap_or(p.name) })
}

/// Changes a project the user owns; answers it as it now is.
pub async fn change(client: &Client, id: &str, change: ProjectChange) -> CmdResult<ProjectDetail> {
    let mut update = client.projects().update(id);
    let mut any = false;
    let mut short = String::new();
    if let Some(s) = &change.short_name {
        short = check_short_name(s)?;
        update = update.project_name(short.clone());
        any = true;
    }
    if let Some(n) = &change.name {
        update = update.name(check_name(n)?);
        any = true;
    }
    if let Some(d) = &change.description {
        let d = d.trim();
        update = update.description((!d.is_empty()).then(|| d.to_string()));
        any = true;
    }
    if any {
        update.send().await.map_err(|e| taken(e, &short))?;
    }
    if let Some(public) = change.public {
        client.projects().change_sharing(id, public).await?;
    }
    detail(client, id).await
}

/// Adds the colleague with this e-mail address to project `id`.
pub async fn add_member(client: &Client, id: &str, email: &str, access: Access) -> CmdResult<ProjectDetail> {
    let me = people::me(client).await?;
    let user = people::find(client, email, &me).await?;
    client.projects().add_user(id, user.as_str(), Some(access.permissions())).await?;
    detail(client, id).await
}

/// Takes `user` off project `id`.
pub async fn remove_member(client: &Client, id: &str, user: &str) -> CmdResult<ProjectDetail> {
    client.projects().remove_user(id, user).await?;
    detail(client, id).await
}

/// Deletes project `id`; its samples stay, out of any project.
pub async fn delete(client: &Client, id: &str) -> CmdResult<()> {
    Ok(client.projects().delete(id).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_checked_before_sending() {
        assert_eq!(short_name_problem("outbreak_7"), None);
        assert_eq!(short_name_problem(" run-42 "), None);
        assert!(short_name_problem("ab").unwrap().contains("3 to 15 characters; “ab” has 2"));
        assert!(short_name_problem("outbreak 7").unwrap().contains("no spaces"));
        assert!(short_name_problem("épidémie").unwrap().contains("only letters, digits"));
        assert!(short_name_problem("a_very_long_project_name").is_some());
    }

    /// A project on a real local service: created, a member added by e-mail, renamed,
    /// described, made public (a stranger then sees it, not its members), the member taken off,
    /// then deleted while its sample stays.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_project_is_made_shared_changed_and_deleted_and_its_samples_stay() {
        let dir = tempfile::tempdir().unwrap();
        let service = crate::testing::TestService::start(&dir.path().join("data"), Default::default()).await;
        let client = |email: &'static str, org: Option<&'static str>| service.user_in(email, org);
        let owner = client("lab@example.org", None).await;
        let member = client("colleague@example.org", None).await;
        let stranger = client("someone@elsewhere.org", Some("elsewhere")).await;

        let bad =
            create(&owner, NewProject { short_name: "outbreak 7".into(), ..Default::default() }).await.unwrap_err();
        assert!(bad.message.contains("no spaces"), "{bad:?}");
        let new = NewProject {
            short_name: "outbreak_7".into(),
            name: Some("Outbreak 7".into()),
            description: Some("  ward 3 isolates ".into()),
            public: false,
        };
        let p = create(&owner, new).await.unwrap();
        let path = dir.path().join("s.fastq");
        std::fs::write(&path, "@r1\nACGTACGTAC\n+\nIIIIIIIIII\n").unwrap();
        let sample = id_of(&owner.samples().upload(&path).project(p.id.as_str()).send().await.unwrap().uri);

        let d = detail(&owner, &p.id).await.unwrap();
        assert_eq!((d.project.role, d.samples), (Role::Owner, 1));
        assert_eq!(d.project.description.as_deref(), Some("ward 3 isolates"));
        assert_eq!(d.members.as_ref().unwrap().len(), 1, "the owner alone");
        assert!(list(&stranger).await.unwrap().is_empty(), "a private project is not listed to others");

        let nobody = add_member(&owner, &p.id, "nobody@example.org", Access::Full).await.unwrap_err();
        assert_eq!(nobody.code, "no_account");
        let d = add_member(&owner, &p.id, "colleague@example.org", Access::View).await.unwrap();
        let members = d.members.unwrap();
        assert_eq!(members.len(), 2);
        assert!(members[0].owner && members[0].person.me);
        assert_eq!(members[1].person.email.as_deref(), Some("colleague@example.org"));
        let mut granted = members[1].permissions.clone();
        granted.sort();
        assert_eq!(granted, ["can_download_files", "can_see_files"]);
        let theirs = list(&member).await.unwrap();
        assert_eq!((theirs.len(), theirs[0].role), (1, Role::Member));
        assert_eq!(theirs[0].owner.email.as_deref(), Some("lab@example.org"));
        assert_eq!(
            change(&member, &p.id, ProjectChange { public: Some(true), ..Default::default() }).await.unwrap_err().code,
            "forbidden"
        );

        let changed = ProjectChange {
            short_name: Some("outbreak_7b".into()),
            name: Some("Outbreak 7 (ward 3)".into()),
            description: Some(String::new()),
            public: Some(true),
        };
        let d = change(&owner, &p.id, changed).await.unwrap();
        assert_eq!((d.project.short_name.as_str(), d.project.name.as_str()), ("outbreak_7b", "Outbreak 7 (ward 3)"));
        assert!(d.project.public && d.project.description.is_none());
        let seen = list(&stranger).await.unwrap();
        assert_eq!((seen.len(), seen[0].role), (1, Role::Public));
        let public = detail(&stranger, &p.id).await.unwrap();
        assert!(public.members.is_none(), "who belongs to it is for its people only");

        let colleague = members[1].person.id.clone();
        let d = remove_member(&owner, &p.id, &colleague).await.unwrap();
        assert_eq!(d.members.unwrap().len(), 1);
        assert_eq!(list(&member).await.unwrap()[0].role, Role::Public, "still public, no longer a member");

        delete(&owner, &p.id).await.unwrap();
        assert!(list(&owner).await.unwrap().is_empty());
        let kept = owner.samples().get(&sample).await.unwrap();
        assert!(kept.project.is_none(), "the sample stays, out of any project");
    }

    #[test]
    fn view_access_sees_and_downloads_only() {
        assert_eq!(Access::View.permissions(), ["can_see_files", "can_download_files"]);
        assert_eq!(Access::Full.permissions().len(), 4);
    }
}
