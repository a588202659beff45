//! Organisation roles and the management of an organisation's users: who manages whom, what
//! an admin may do with a member's records, disabling and enabling, invitations and password
//! links, revoking keys and sessions, and the operator's commands.

use std::collections::BTreeSet;

use mgds_server::admin::Role;
use reqwest::header::{COOKIE, SET_COOKIE};

use super::*;

/// The lab: an owner, an admin and two members in "Lab A"; an owner and a member of "Lab B".
struct Lab {
    head: TestUser,
    admin: TestUser,
    member: TestUser,
    mate: TestUser,
    b_head: TestUser,
    b_member: TestUser,
}

impl Lab {
    async fn build(svc: &Service) -> Lab {
        Lab {
            head: svc.user_in("head@a.lab", Some("Lab A"), Role::Owner).await,
            admin: svc.user_in("admin@a.lab", Some("Lab A"), Role::Admin).await,
            member: svc.user_in("member@a.lab", Some("Lab A"), Role::Member).await,
            mate: svc.user_in("mate@a.lab", Some("Lab A"), Role::Member).await,
            b_head: svc.user_in("head@b.lab", Some("Lab B"), Role::Owner).await,
            b_member: svc.user_in("member@b.lab", Some("Lab B"), Role::Member).await,
        }
    }
}

fn users_path(id: &str) -> String {
    format!("/api/v1/organization/users/{id}")
}

#[tokio::test]
async fn everyone_sees_their_organisation_and_admins_list_its_users() {
    let svc = Service::start().await;
    let lab = Lab::build(&svc).await;
    for (u, role) in [(&lab.head, "owner"), (&lab.admin, "admin"), (&lab.member, "member")] {
        let (s, o) = svc.get(Some(u), "/api/v1/organization").await;
        assert_eq!(s, 200, "{o}");
        assert_eq!((o["name"].as_str(), o["role"].as_str(), o["users"].as_i64()), (Some("Lab A"), Some(role), Some(4)));
        let (_, a) = svc.get(Some(u), "/api/v1/account").await;
        assert_eq!(a["role"], json!(role), "{a}");
        assert_eq!(a["organization_admin"], json!(role != "member"), "{a}");
    }
    let (s, b) = svc.get(None, "/api/v1/organization").await;
    assert_error(s, &b, 401);

    // Admins and owners list their own organisation's users, with the list rules.
    let want: BTreeSet<&str> = ["head@a.lab", "admin@a.lab", "member@a.lab", "mate@a.lab"].into();
    for u in [&lab.head, &lab.admin] {
        let r = svc.as_user(Some(u), Method::GET, "/api/v1/organization/users?per_page=2").send().await.unwrap();
        assert_eq!(r.headers()["x-total-count"], "4");
        assert!(r.headers()["link"].to_str().unwrap().contains("rel=\"next\""));
        let (s, all) = svc.get(Some(u), "/api/v1/organization/users?per_page=10").await;
        assert_eq!(s, 200, "{all}");
        let got: BTreeSet<&str> = all.as_array().unwrap().iter().map(|m| m["email"].as_str().unwrap()).collect();
        assert_eq!(got, want);
    }
    let filter = urlencoding(&json!({"role": {"$in": ["owner", "admin"]}}).to_string());
    let (s, l) = svc
        .get(Some(&lab.admin), &format!("/api/v1/organization/users?where={filter}&sort=%7B%22email%22%3Atrue%7D"))
        .await;
    assert_eq!(s, 200, "{l}");
    let emails: Vec<&str> = l.as_array().unwrap().iter().map(|m| m["email"].as_str().unwrap()).collect();
    assert_eq!(emails, ["head@a.lab", "admin@a.lab"], "filtered by role, sorted by e-mail descending");
    let (s, b) = svc.get(Some(&lab.admin), "/api/v1/organization/users?where=%7B%22password%22%3A1%7D").await;
    assert_error(s, &b, 400);

    // Members are told where to look instead; another organisation's users are not there.
    let (s, b) = svc.get(Some(&lab.member), "/api/v1/organization/users").await;
    assert_error(s, &b, 403);
    assert!(b["message"].as_str().unwrap().contains("GET /api/v1/users"), "{b}");
    let (s, b) = svc.get(Some(&lab.member), &users_path(&lab.mate.id)).await;
    assert_error(s, &b, 403);
    let (s, m) = svc.get(Some(&lab.admin), &users_path(&lab.mate.id)).await;
    assert_eq!((s, m["email"].as_str(), m["role"].as_str()), (200, Some("mate@a.lab"), Some("member")), "{m}");
    let (hidden_s, hidden) = svc.get(Some(&lab.admin), &users_path(&lab.b_member.id)).await;
    let (missing_s, missing) = svc.get(Some(&lab.admin), &users_path("0123456789abcdef")).await;
    assert_eq!((hidden_s, &hidden), (missing_s, &missing), "another organisation's user answers like a missing one");
    assert_eq!(hidden_s, 404);
}

fn urlencoding(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// What one management action answers, for every pair of (caller, target) roles.
#[tokio::test]
async fn owners_manage_everyone_admins_manage_members_and_nobody_manages_themselves() {
    let svc = Service::start().await;
    let lab = Lab::build(&svc).await;
    // Each case makes its own target, so that the actions do not disturb one another.
    let mut n = 0;
    let mut target = |role: Role| {
        n += 1;
        let email = format!("target{n}@a.lab");
        let svc = &svc;
        async move { svc.user_in(&email, Some("Lab A"), role).await }
    };
    type Case = (&'static str, Method, &'static str, Value);
    let actions: [Case; 6] = [
        ("disable", Method::PATCH, "", json!({"disabled": true})),
        ("make admin", Method::PATCH, "", json!({"role": "admin"})),
        ("make member", Method::PATCH, "", json!({"role": "member"})),
        ("reset", Method::POST, "/reset_password", json!({})),
        ("revoke", Method::POST, "/revoke", json!({})),
        ("password", Method::POST, "PASSWORD", json!({"new_password": "chosen by an admin, long"})),
    ];
    for (label, method, suffix, body) in actions {
        for (caller, caller_role) in [(&lab.head, Role::Owner), (&lab.admin, Role::Admin), (&lab.member, Role::Member)]
        {
            for target_role in Role::ALL {
                let t = target(target_role).await;
                let path = if suffix == "PASSWORD" {
                    format!("/api/v1/users/{}/password", t.id)
                } else {
                    format!("{}{suffix}", users_path(&t.id))
                };
                let r = svc.as_user(Some(caller), method.clone(), &path).json(&body).send().await.unwrap();
                let (s, answer) = json_of(r).await;
                let gives = match label {
                    "make admin" => Some(Role::Admin),
                    "make member" => Some(Role::Member),
                    _ => None,
                };
                let allowed = caller_role == Role::Owner
                    || (caller_role == Role::Admin
                        && target_role == Role::Member
                        && gives.is_none_or(|g| g == Role::Member));
                let ctx = format!("{caller_role} {label} of a {target_role}: {answer}");
                if allowed {
                    assert!(matches!(s, 200 | 204), "{ctx}");
                } else {
                    assert_error(s, &answer, 403);
                }
            }
        }
        // Nobody acts on themselves here, and nobody on another organisation's users.
        let own = if suffix == "PASSWORD" {
            format!("/api/v1/users/{}/password", lab.head.id)
        } else {
            format!("{}{suffix}", users_path(&lab.head.id))
        };
        let (s, b) =
            json_of(svc.as_user(Some(&lab.head), method.clone(), &own).json(&body).send().await.unwrap()).await;
        assert!(matches!(s, 400 | 403), "{label} of oneself: {s} {b}");
        let theirs = if suffix == "PASSWORD" {
            format!("/api/v1/users/{}/password", lab.b_member.id)
        } else {
            format!("{}{suffix}", users_path(&lab.b_member.id))
        };
        let (s, b) =
            json_of(svc.as_user(Some(&lab.head), method.clone(), &theirs).json(&body).send().await.unwrap()).await;
        assert_error(s, &b, 404);
    }
    // Lab B's owner was never touched, and Lab A's head is still its owner.
    let (_, a) = svc.get(Some(&lab.b_head), "/api/v1/account").await;
    assert_eq!(a["role"], json!("owner"));
    let (_, a) = svc.get(Some(&lab.head), "/api/v1/account").await;
    assert_eq!(a["role"], json!("owner"));
}

#[tokio::test]
async fn admins_invite_members_and_owners_invite_any_role() {
    let svc = Service::start().await;
    let lab = Lab::build(&svc).await;
    let (s, b) = svc.post(Some(&lab.member), "/api/v1/organization/users", json!({"email": "x@a.lab"})).await;
    assert_error(s, &b, 403);
    let (s, b) =
        svc.post(Some(&lab.admin), "/api/v1/organization/users", json!({"email": "x@a.lab", "role": "admin"})).await;
    assert_error(s, &b, 403);
    let (s, b) = svc.post(Some(&lab.admin), "/api/v1/organization/users", json!({"email": "not an address"})).await;
    assert_error(s, &b, 400);
    let (s, b) = svc.post(Some(&lab.admin), "/api/v1/organization/users", json!({"email": "member@b.lab"})).await;
    assert_error(s, &b, 409);
    let (s, link) = svc.post(Some(&lab.admin), "/api/v1/organization/users", json!({"email": "New@A.lab"})).await;
    assert_eq!(s, 201, "{link}");
    assert_eq!((link["user"]["email"].as_str(), link["user"]["role"].as_str()), (Some("new@a.lab"), Some("member")));
    assert_eq!(link["user"]["has_password"], json!(false));
    assert_eq!(link["user"]["link_expires_at"], link["expires_at"]);
    let url = link["url"].as_str().unwrap();
    assert!(url.starts_with(&format!("{}/#link=", svc.url)), "the secret is in the fragment: {url}");
    let (s, link) = svc
        .post(Some(&lab.head), "/api/v1/organization/users", json!({"email": "deputy@a.lab", "role": "owner"}))
        .await;
    assert_eq!((s, link["user"]["role"].as_str()), (201, Some("owner")), "{link}");
}

/// The secret of a link's address.
fn token_of(link: &Value) -> String {
    link["url"].as_str().unwrap().split_once("#link=").unwrap().1.to_string()
}

async fn use_link(svc: &Service, token: &str, password: &str) -> (u16, Value, Option<String>) {
    let r = svc
        .req(Method::POST, "/api/v1/password_link/use")
        .json(&json!({"token": token, "password": password}))
        .send()
        .await
        .unwrap();
    let cookie = r.headers().get(SET_COOKIE).map(|c| c.to_str().unwrap().split(';').next().unwrap().to_string());
    let (s, b) = json_of(r).await;
    (s, b, cookie)
}

async fn sign_in(svc: &Service, email: &str, password: &str) -> (u16, Value) {
    json_of(
        svc.req(Method::POST, "/api/v1/sign_in")
            .json(&json!({"email": email, "password": password}))
            .send()
            .await
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn an_invitation_and_a_reset_link_set_a_password_once() {
    let svc = Service::start().await;
    let lab = Lab::build(&svc).await;
    let (_, link) = svc.post(Some(&lab.admin), "/api/v1/organization/users", json!({"email": "new@a.lab"})).await;
    let token = token_of(&link);
    let (s, info) = svc.post(None, "/api/v1/password_link", json!({"token": token})).await;
    assert_eq!(s, 200, "{info}");
    assert_eq!(
        (info["email"].as_str(), info["organization"].as_str(), info["kind"].as_str()),
        (Some("new@a.lab"), Some("Lab A"), Some("invitation"))
    );
    // A wrong or malformed secret learns nothing; a short password is refused before the link
    // is used up.
    for wrong in ["0".repeat(64), "not a token".into(), String::new()] {
        let (s, b) = svc.post(None, "/api/v1/password_link", json!({"token": wrong})).await;
        assert_error(s, &b, 404);
    }
    let (s, b, _) = use_link(&svc, &token, "short").await;
    assert_error(s, &b, 400);
    let (s, session, cookie) = use_link(&svc, &token, "the invited user's passphrase").await;
    assert_eq!(s, 200, "{session}");
    assert_eq!(session["user"]["email"], json!("new@a.lab"));
    let cookie = cookie.expect("a session cookie");
    let r = svc.req(Method::GET, "/api/v1/account").header(COOKIE, &cookie).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200, "signed in by the link");
    let (s, b, _) = use_link(&svc, &token, "another passphrase, long").await;
    assert_error(s, &b, 404);
    let (s, _) = sign_in(&svc, "new@a.lab", "the invited user's passphrase").await;
    assert_eq!(s, 200);

    // A reset: the old password works until the link is used; then the user's sessions end.
    let id = link["user"]["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let (s, reset) = svc.post(Some(&lab.admin), &format!("{}/reset_password", users_path(&id)), json!({})).await;
    assert_eq!(s, 200, "{reset}");
    let (_, info) = svc.post(None, "/api/v1/password_link", json!({"token": token_of(&reset)})).await;
    assert_eq!(info["kind"], json!("reset"));
    let (s, _) = sign_in(&svc, "new@a.lab", "the invited user's passphrase").await;
    assert_eq!(s, 200, "the old password works until the link is used");
    // A newer link replaces the older one.
    let (_, newer) = svc.post(Some(&lab.head), &format!("{}/reset_password", users_path(&id)), json!({})).await;
    let (s, b, _) = use_link(&svc, &token_of(&reset), "a replaced link's pass").await;
    assert_error(s, &b, 404);
    let (s, _, _) = use_link(&svc, &token_of(&newer), "the reset passphrase").await;
    assert_eq!(s, 200);
    let r = svc.req(Method::GET, "/api/v1/account").header(COOKIE, &cookie).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401, "the sessions before the reset ended");
    let (s, _) = sign_in(&svc, "new@a.lab", "the invited user's passphrase").await;
    assert_eq!(s, 401);
    let (s, _) = sign_in(&svc, "new@a.lab", "the reset passphrase").await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn a_disabled_account_stops_at_once_keeps_its_records_and_comes_back() {
    let svc = Service::start().await;
    let lab = Lab::build(&svc).await;
    let m = &lab.member;
    mgds_server::store::sessions::set_password(&svc.state.db, None, &m.id, "the member's passphrase").await.unwrap();
    let (s, _) = sign_in(&svc, &m.email, "the member's passphrase").await;
    assert_eq!(s, 200);
    let r = svc
        .req(Method::POST, "/api/v1/sign_in")
        .json(&json!({"email": m.email, "password": "the member's passphrase"}))
        .send()
        .await
        .unwrap();
    let cookie = r.headers()[SET_COOKIE].to_str().unwrap().split(';').next().unwrap().to_string();
    let shared = svc.upload_sample(m, "shared.fastq", &fastq(3), json!({})).await;
    let (s, _) = svc.patch(Some(m), &format!("/api/v1/samples/{shared}"), json!({"visibility": "shared"})).await;
    assert_eq!(s, 200);
    let private = svc.upload_sample(m, "private.fastq", &fastq(3), json!({})).await;
    let (s, dl) = svc.post(Some(m), &format!("/api/v1/samples/{private}/download_uri"), json!({})).await;
    assert_eq!(s, 200, "{dl}");
    let address = dl["download_uri"].as_str().unwrap().to_string();
    assert_eq!(svc.http.get(&address).send().await.unwrap().status().as_u16(), 200);
    let (s, open) =
        svc.post(Some(m), "/api/v1/samples/init_upload", json!({"filename": "later.fastq", "size": 1000})).await;
    assert_eq!(s, 200, "{open}");

    let (s, after) = svc.patch(Some(&lab.admin), &users_path(&m.id), json!({"disabled": true})).await;
    assert_eq!(s, 200, "{after}");
    assert!(
        after["disabled_at"].is_string() && after["disabled_by"]["$ref"].as_str().unwrap().ends_with(&lab.admin.id)
    );
    // Key, session, download address, open upload: all stop on the very next request.
    let (s, b) = svc.get(Some(m), "/api/v1/account").await;
    assert_error(s, &b, 401);
    assert!(b["message"].as_str().unwrap().contains("disabled"), "{b}");
    let r = svc.req(Method::GET, "/api/v1/account").header(COOKIE, &cookie).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401, "the browser session ended");
    let status = svc.http.get(&address).send().await.unwrap().status().as_u16();
    assert!(matches!(status, 403 | 404), "a download address of a disabled account stops: {status}");
    let open_uploads: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM uploads WHERE owner_id = $1 AND confirmed_id IS NULL")
            .bind(&m.id)
            .fetch_one(&svc.state.db)
            .await
            .unwrap();
    assert_eq!(open_uploads, 0, "the open upload was canceled");
    let (s, b) = sign_in(&svc, &m.email, "the member's passphrase").await;
    assert_error(s, &b, 403);
    assert!(b["message"].as_str().unwrap().contains("disabled"), "told only with the right password: {b}");
    let (s, b) = sign_in(&svc, &m.email, "a wrong passphrase!").await;
    assert_error(s, &b, 401);

    // The records stay: the organisation still sees the shared sample, the admin both.
    let (s, _) = svc.get(Some(&lab.mate), &format!("/api/v1/samples/{shared}")).await;
    assert_eq!(s, 200);
    let (s, _) = svc.get(Some(&lab.admin), &format!("/api/v1/samples/{private}")).await;
    assert_eq!(s, 200);
    let (_, l) = svc.get(Some(&lab.admin), "/api/v1/organization/users?where=%7B%22disabled%22%3Atrue%7D").await;
    assert_eq!(l.as_array().unwrap().len(), 1, "{l}");

    // Enabled again: the key works; the old download address stays dead.
    let (s, after) = svc.patch(Some(&lab.admin), &users_path(&m.id), json!({"disabled": false})).await;
    assert_eq!((s, after["disabled_at"].clone()), (200, Value::Null), "{after}");
    let (s, _) = svc.get(Some(m), "/api/v1/account").await;
    assert_eq!(s, 200);
    let status = svc.http.get(&address).send().await.unwrap().status().as_u16();
    assert!(matches!(status, 403 | 404), "an address made before the account was disabled stays dead: {status}");
}

#[tokio::test]
async fn revoking_ends_the_key_and_sessions_but_not_the_password() {
    let svc = Service::start().await;
    let lab = Lab::build(&svc).await;
    let m = &lab.member;
    mgds_server::store::sessions::set_password(&svc.state.db, None, &m.id, "the member's passphrase").await.unwrap();
    let (s, _) = sign_in(&svc, &m.email, "the member's passphrase").await;
    assert_eq!(s, 200);
    let (s, r) = svc.post(Some(&lab.admin), &format!("{}/revoke", users_path(&m.id)), json!({})).await;
    assert_eq!((s, r["sessions"].as_i64()), (200, Some(1)), "{r}");
    let (s, b) = svc.get(Some(m), "/api/v1/account").await;
    assert_error(s, &b, 401);
    let (s, _) = sign_in(&svc, &m.email, "the member's passphrase").await;
    assert_eq!(s, 200, "the user signs in with their password and makes a new key");
}

#[tokio::test]
async fn admins_and_owners_act_on_every_record_of_their_organisation_and_no_other() {
    let svc = Service::start().await;
    let lab = Lab::build(&svc).await;
    let m = &lab.member;
    let private = svc.upload_sample(m, "private.fastq", &fastq(3), json!({})).await;
    let (_, md) = svc.get(Some(m), &format!("/api/v1/samples/{private}")).await;
    let metadata = md["metadata"]["$ref"].as_str().unwrap().to_string();
    let (s, project) = svc.post(Some(m), "/api/v1/projects", json!({"project_name": "member-p"})).await;
    assert_eq!(s, 200, "{project}");
    let project = project["$uri"].as_str().unwrap().to_string();
    let document = svc.upload_document(m, "notes.txt", b"the member's notes").await;
    let job = svc.job("Classify", "classification", json!({})).await;

    // A member of the same organisation, and another organisation's owner, see none of it.
    for outsider in [&lab.mate, &lab.b_head] {
        for path in [format!("/api/v1/samples/{private}"), project.clone(), format!("/api/v1/documents/{document}")] {
            let (s, b) = svc.get(Some(outsider), &path).await;
            assert_error(s, &b, 404);
        }
    }
    for (boss, n) in [(&lab.admin, 1), (&lab.head, 2)] {
        let (s, b) = svc.get(Some(boss), &format!("/api/v1/samples/{private}")).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = svc.patch(Some(boss), &metadata, json!({"description": format!("checked {n}")})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = svc
            .post(
                Some(boss),
                "/api/v1/tags",
                json!({"name": format!("qc-{n}"), "sample": {"$ref": format!("/api/v1/samples/{private}")}}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = svc
            .post(
                Some(boss),
                &format!("/api/v1/jobs/{job}/run"),
                json!({"sample": {"$ref": format!("/api/v1/samples/{private}")}, "job_args": {}}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = svc.post(Some(boss), &format!("/api/v1/samples/{private}/download_uri"), json!({})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = svc.patch(Some(boss), &project, json!({"description": format!("reviewed {n}")})).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["permissions"].as_array().unwrap().len(), 4, "an admin holds every permission: {b}");
        let (s, b) = svc.get(Some(boss), &format!("{project}/members")).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = svc
            .patch(Some(boss), &format!("/api/v1/documents/{document}"), json!({"description": format!("filed {n}")}))
            .await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = svc
            .post(
                Some(boss),
                &format!("/api/v1/documents/{document}/add_user"),
                json!({"user": {"$ref": format!("/api/v1/users/{}", lab.mate.id)}}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
    }
    let (s, b) =
        svc.patch(Some(&lab.admin), &format!("/api/v1/samples/{private}"), json!({"visibility": "shared"})).await;
    assert_eq!((s, b["visibility"].as_str()), (200, Some("shared")), "{b}");
    let (s, _) = svc.get(Some(&lab.mate), &format!("/api/v1/samples/{private}")).await;
    assert_eq!(s, 200, "shared with the organisation by its admin");
    // Another organisation's owner may not act on it even now that they would see it shared.
    let (s, b) = svc.delete(Some(&lab.b_head), &format!("/api/v1/samples/{private}")).await;
    assert_error(s, &b, 404);
    for path in [format!("/api/v1/documents/{document}"), format!("/api/v1/samples/{private}"), project.clone()] {
        let (s, b) = svc.delete(Some(&lab.head), &path).await;
        assert_eq!(s, 204, "{path}: {b}");
        let (s, _) = svc.get(Some(m), &path).await;
        assert_eq!(s, 404, "{path}");
    }
}

#[tokio::test]
async fn the_operator_gives_roles_disables_revokes_and_makes_links() {
    let svc = Service::start().await;
    let lab = Lab::build(&svc).await;
    let state = &svc.state;
    admin::set_role(&state.db, "member@a.lab", Role::Owner).await.unwrap();
    let (_, a) = svc.get(Some(&lab.member), "/api/v1/account").await;
    assert_eq!(a["role"], json!("owner"));
    let stopped = admin::set_disabled(state, "MEMBER@a.lab", true).await.unwrap();
    assert_eq!((stopped.sessions, stopped.uploads), (0, 0));
    let (s, _) = svc.get(Some(&lab.member), "/api/v1/account").await;
    assert_eq!(s, 401);
    let listed = admin::list_users(&state.db).await.unwrap();
    let row = listed.iter().find(|u| u.email == "member@a.lab").unwrap();
    assert_eq!((row.role.as_str(), row.disabled_at.is_some(), row.organization.as_str()), ("owner", true, "Lab A"));
    admin::set_disabled(state, "member@a.lab", false).await.unwrap();
    let (s, _) = svc.get(Some(&lab.member), "/api/v1/account").await;
    assert_eq!(s, 200);
    admin::revoke(state, "member@a.lab").await.unwrap();
    let (s, _) = svc.get(Some(&lab.member), "/api/v1/account").await;
    assert_eq!(s, 401);
    let (url, _) = admin::password_link(&state.db, "member@a.lab", "https://mgds.lab.example.org/").await.unwrap();
    let token = url.strip_prefix("https://mgds.lab.example.org/#link=").expect(&url).to_string();
    let (s, info) = svc.post(None, "/api/v1/password_link", json!({"token": token})).await;
    assert_eq!((s, info["kind"].as_str()), (200, Some("invitation")), "{info}");
    assert!(matches!(
        admin::set_role(&state.db, "nobody@a.lab", Role::Admin).await,
        Err(admin::AdminError::NoSuchUser(_))
    ));
}

/// A picture of `w`×`h` pixels as PNG.
fn png(w: u32, h: u32) -> Vec<u8> {
    let svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}"><rect width="{w}" height="{h}" fill="#2a6f97"/></svg>"##
    );
    mgds_plots::svg_to_png(&svg, 1.0).unwrap()
}

async fn put_logo(svc: &Service, u: &TestUser, bytes: Vec<u8>) -> (u16, Value) {
    let r = svc.as_user(Some(u), Method::PUT, "/api/v1/organization/logo").body(bytes).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn admins_name_the_lab_and_set_its_logo_for_every_user_to_see() {
    let svc = Service::start().await;
    let lab = Lab::build(&svc).await;
    let logo_path = "/api/v1/organization/logo";

    // No logo yet: 404 with what to do; members neither rename nor set one.
    let (s, b) = svc.get(Some(&lab.member), logo_path).await;
    assert_error(s, &b, 404);
    let (_, o) = svc.get(Some(&lab.member), "/api/v1/organization").await;
    assert!(o.get("logo").is_none(), "{o}");
    let (s, b) = put_logo(&svc, &lab.member, png(40, 20)).await;
    assert_error(s, &b, 403);
    let (s, b) = svc.patch(Some(&lab.member), "/api/v1/organization", json!({"lab_name": "Mine"})).await;
    assert_error(s, &b, 403);

    // An admin names the lab on its reports (the organisation keeps its name, by which users
    // are placed in it) and sets a PNG; every user of the lab sees it, no other lab does.
    let (s, o) =
        svc.patch(Some(&lab.admin), "/api/v1/organization", json!({"lab_name": "  Lab A Microbiology "})).await;
    assert_eq!(
        (s, o["lab_name"].as_str(), o["name"].as_str()),
        (200, Some("Lab A Microbiology"), Some("Lab A")),
        "{o}"
    );
    for bad in [json!({"lab_name": "x".repeat(201)}), json!({"lab_name": "two\nlines"}), json!({"name": "Lab B"})] {
        let (s, b) = svc.patch(Some(&lab.admin), "/api/v1/organization", bad.clone()).await;
        assert_error(s, &b, 400);
    }
    let (_, o) = svc.get(Some(&lab.member), "/api/v1/organization").await;
    assert_eq!((o["name"].as_str(), o["lab_name"].as_str()), (Some("Lab A"), Some("Lab A Microbiology")), "{o}");
    let (s, o) = svc.patch(Some(&lab.head), "/api/v1/organization", json!({"lab_name": ""})).await;
    assert!(s == 200 && o.get("lab_name").is_none(), "an empty name goes back to the organisation's: {o}");
    let picture = png(120, 40);
    let (s, o) = put_logo(&svc, &lab.admin, picture.clone()).await;
    assert_eq!((s, o["logo"].as_str()), (200, Some(logo_path)), "{o}");
    let r = svc.as_user(Some(&lab.mate), Method::GET, logo_path).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.bytes().await.unwrap().to_vec(), picture);
    let (s, b) = svc.get(Some(&lab.b_member), logo_path).await;
    assert_error(s, &b, 404);

    // Refused with the reason, the logo kept: not a picture, a broken PNG, too many pixels, too
    // many bytes, nothing.
    let mut broken = picture.clone();
    broken.truncate(60);
    for (bytes, status, said) in [
        (b"GIF89a....".to_vec(), 422, "PNG, JPEG or SVG"),
        (broken, 422, "logo"),
        (png(4_097, 2), 413, "4096"),
        (vec![b' '; mgds_api::MAX_LOGO_BYTES + 1], 413, "2 MiB"),
        (Vec::new(), 400, "body"),
        // Pictures and filters inside an SVG become pixels of any size: refused.
        (
            br#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://www.w3.org/1999/xlink" width="9" height="9"><x:image href="data:image/png;base64,AAAA" width="9" height="9"/></svg>"#.to_vec(),
            422,
            "<image>",
        ),
        (
            br#"<svg xmlns="http://www.w3.org/2000/svg"><filter id="f"><feGaussianBlur stdDeviation="9"/></filter></svg>"#.to_vec(),
            422,
            "<filter>",
        ),
        (br#"<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>"#.to_vec(), 422, "cannot be read"),
    ] {
        let (s, b) = put_logo(&svc, &lab.admin, bytes).await;
        assert_error(s, &b, status);
        assert!(b["message"].as_str().unwrap().contains(said), "{said:?}: {b}");
    }
    let r = svc.as_user(Some(&lab.head), Method::GET, logo_path).send().await.unwrap();
    assert_eq!(r.bytes().await.unwrap().to_vec(), picture, "a refused logo changes nothing");

    // An SVG logo is served so that nothing in it runs when opened on its own.
    let svg = br##"<svg xmlns="http://www.w3.org/2000/svg" width="90" height="30"><script>alert(1)</script><circle cx="15" cy="15" r="12" fill="#c44"/></svg>"##;
    let (s, o) = put_logo(&svc, &lab.head, svg.to_vec()).await;
    assert_eq!(s, 200, "{o}");
    let r = svc.as_user(Some(&lab.member), Method::GET, logo_path).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "image/svg+xml");
    assert!(r.headers()["content-security-policy"].to_str().unwrap().starts_with("sandbox"));
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");

    // Removed: reports show the name alone. Each change is in the audit trail.
    let (s, o) = svc.delete(Some(&lab.admin), logo_path).await;
    assert_eq!(s, 200, "{o}");
    assert!(o.get("logo").is_none(), "{o}");
    let (s, b) = svc.get(Some(&lab.member), logo_path).await;
    assert_error(s, &b, 404);
    let (_, trail) = svc.get(Some(&lab.head), "/api/v1/audit?per_page=50").await;
    let actions: Vec<&str> = trail.as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    for action in ["organization.updated", "organization.logo_set", "organization.logo_removed"] {
        assert!(actions.contains(&action), "{action} in {actions:?}");
    }
}
