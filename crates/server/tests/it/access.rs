//! The access matrix: {owner, organisation mate, organisation admin, organisation owner, project
//! member, other user, another organisation's admin, anonymous, revoked key} × every route.
//!
//! - lists and `X-Total-Count` never include what the caller may not see;
//! - a single record the caller may not see answers byte for byte like one that does not exist;
//! - a caller who sees a record but may not change it gets 403, anonymous callers 401 with
//!   `WWW-Authenticate`, and the owner succeeds;
//! - a replaced key stops working at once and the new one works on the very next request;
//! - repeated authentication failures from one address end in 429 with `Retry-After`.

use mgds_server::admin::Role;
use std::collections::BTreeSet;
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{HeaderMap, RETRY_AFTER, WWW_AUTHENTICATE};
use serde_json::{Value, json};

use crate::{Service, TestUser, assert_error, fastq};

/// An id of the right shape that names nothing.
const MISSING: &str = "0123456789abcdef";

/// Every project permission, sorted.
const ALL_PERMISSIONS: [&str; 4] = ["can_add_files", "can_download_files", "can_edit_metadata", "can_see_files"];

fn sref(id: &str) -> Value {
    json!({"$ref": format!("/api/v1/samples/{id}")})
}

fn uref(id: &str) -> Value {
    json!({"$ref": format!("/api/v1/users/{id}")})
}

fn pref(id: &str) -> Value {
    json!({"$ref": format!("/api/v1/projects/{id}")})
}

/// The id at the end of a resource address.
fn id_of(uri: &str) -> String {
    uri.rsplit('/').next().unwrap().to_string()
}

// ---------------------------------------------------------------------------------------------
// Raw answers

/// An answer with its headers and exact body bytes.
struct Raw {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Raw {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn total(&self) -> u64 {
        self.headers
            .get("x-total-count")
            .unwrap_or_else(|| panic!("a list answer must carry X-Total-Count: {}", self.text()))
            .to_str()
            .unwrap()
            .parse()
            .unwrap()
    }
}

async fn send(svc: &Service, who: Option<&TestUser>, method: Method, path: &str, body: Option<&Value>) -> Raw {
    let mut r = svc.as_user(who, method, path);
    if let Some(b) = body {
        r = r.json(b);
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.bytes().await.unwrap().to_vec();
    Raw { status, headers, body }
}

/// A 401 in the service's error shape with a Basic challenge.
fn assert_401(r: &Raw, ctx: &str) {
    assert_eq!(r.status, 401, "{ctx}: {}", r.text());
    assert_error(r.status, &r.json(), 401);
    let challenge = r
        .headers
        .get(WWW_AUTHENTICATE)
        .unwrap_or_else(|| panic!("{ctx}: a 401 must carry WWW-Authenticate"))
        .to_str()
        .unwrap();
    assert!(challenge.starts_with("Basic "), "{ctx}: challenge {challenge:?}");
}

/// A path with `?where=<json>` (and any further `extra` pairs) percent-encoded.
fn with_query(svc: &Service, path: &str, pairs: &[(&str, &str)]) -> String {
    let mut u = reqwest::Url::parse(&format!("{}{path}", svc.url)).unwrap();
    {
        let mut q = u.query_pairs_mut();
        for (k, v) in pairs {
            q.append_pair(k, v);
        }
    }
    format!("{}?{}", u.path(), u.query().unwrap_or_default())
}

// ---------------------------------------------------------------------------------------------
// The world: callers and the owner's records

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    /// Owns every record.
    Owner,
    /// In the owner's organisation.
    Orgmate,
    /// Admin of the owner's organisation.
    Boss,
    /// Owner (the role) of the owner's organisation.
    Head,
    /// Another organisation; member of the owner's private project with default permissions.
    Member,
    /// Another organisation; no relation.
    Other,
    /// Admin of `Other`'s organisation.
    Rival,
    /// Another organisation; signs in with a key that replaced their first one.
    Revoked,
    /// No credentials.
    Anon,
}

const EVERYONE: [Who; 9] =
    [Who::Owner, Who::Orgmate, Who::Boss, Who::Head, Who::Member, Who::Other, Who::Rival, Who::Revoked, Who::Anon];

#[derive(Clone, Copy, Debug)]
enum Kind {
    Samples,
    PublicSamples,
    Metadata,
    Analyses,
    PublicAnalyses,
    Tags,
    Projects,
    PublicProjects,
    Documents,
    Users,
    Jobs,
    Batches,
}

struct World {
    owner: TestUser,
    orgmate: TestUser,
    boss: TestUser,
    head: TestUser,
    member: TestUser,
    other: TestUser,
    rival: TestUser,
    /// The revoked user with their new key.
    revoked: TestUser,
    /// The same user with the key that was replaced.
    revoked_old: TestUser,
    /// Private project; `member` joined it with default permissions.
    project: String,
    /// Public project.
    public_project: String,
    /// Private sample in `project`.
    s_proj: String,
    /// Private sample in no project.
    s_priv: String,
    /// Public sample.
    s_pub: String,
    /// Sample shared with the owner's organisation.
    s_shared: String,
    /// Pre-uploaded (awaiting data) in `project`.
    pre_proj: String,
    /// Pre-uploaded (awaiting data) in no project.
    pre_none: String,
    /// (sample, its metadata record).
    md: Vec<(String, String)>,
    /// Tags by the owner on `s_priv`, `s_proj` and `s_pub`.
    t_priv: String,
    t_proj: String,
    t_pub: String,
    /// A public job, a private job of the owner's (run on `s_proj`), and the owner's draft.
    job_pub: String,
    job_priv: String,
    job_draft: String,
    /// The jobs every service offers (the report job): in everyone's list.
    builtin: Vec<String>,
    /// (sample, the analysis run on it).
    analyses: Vec<(String, String)>,
    a_pub: String,
    /// Documents: shared with nobody, and shared with `member`.
    doc_none: String,
    doc_shared: String,
    /// A sequencing batch of the owner's.
    batch: String,
}

async fn create_project(svc: &Service, owner: &TestUser, name: &str, public: bool) -> String {
    let (s, p) = svc.post(Some(owner), "/api/v1/projects", json!({"project_name": name, "public": public})).await;
    assert_eq!(s, 200, "create project: {p}");
    assert_eq!(p["public"], json!(public));
    id_of(p["$uri"].as_str().unwrap())
}

async fn set_visibility(svc: &Service, owner: &TestUser, id: &str, visibility: &str) {
    let (s, b) = svc.patch(Some(owner), &format!("/api/v1/samples/{id}"), json!({"visibility": visibility})).await;
    assert_eq!(s, 200, "set visibility: {b}");
    assert_eq!(b["visibility"], json!(visibility));
}

async fn preupload(svc: &Service, owner: &TestUser, body: Value) -> String {
    let (s, b) = svc.post(Some(owner), "/api/v1/samples/preupload", body).await;
    assert_eq!(s, 200, "preupload: {b}");
    b["sample_id"].as_str().unwrap().to_string()
}

async fn metadata_of(svc: &Service, owner: &TestUser, sample: &str) -> String {
    let (s, b) = svc.get(Some(owner), &format!("/api/v1/samples/{sample}")).await;
    assert_eq!(s, 200, "{b}");
    id_of(b["metadata"]["$ref"].as_str().unwrap())
}

async fn tag(svc: &Service, user: &TestUser, name: &str, sample: &str) -> String {
    let (s, b) = svc.post(Some(user), "/api/v1/tags", json!({"name": name, "sample": sref(sample)})).await;
    assert_eq!(s, 200, "tag: {b}");
    id_of(b["$uri"].as_str().unwrap())
}

async fn run(svc: &Service, user: &TestUser, job: &str, sample: &str) -> String {
    let (s, b) =
        svc.post(Some(user), &format!("/api/v1/jobs/{job}/run"), json!({"sample": sref(sample), "job_args": {}})).await;
    assert_eq!(s, 200, "run: {b}");
    let uri = b["$ref"].as_str().unwrap();
    assert!(uri.starts_with("/api/v1/analyses/"), "{b}");
    id_of(uri)
}

async fn owners_job(svc: &Service, owner: &TestUser, name: &str, public: bool, draft: bool) -> String {
    mgds_server::routes::register_job(
        &svc.state,
        &mgds_server::routes::JobSpec {
            name: name.into(),
            analysis_type: "classification".into(),
            job_args_schema: json!({}),
            public,
            draft,
            creator_id: Some(owner.id.clone()),
            engine: String::new(),
            engine_version: String::new(),
            reference: String::new(),
        },
    )
    .await
    .expect("register job")
}

impl World {
    async fn build(svc: &Service) -> World {
        let owner = svc.user("owner@alpha.test").await;
        let orgmate = svc.user_in("mate@alpha.test", Some("owner@alpha.test"), Role::Member).await;
        let boss = svc.user_in("boss@alpha.test", Some("owner@alpha.test"), Role::Admin).await;
        let head = svc.user_in("head@alpha.test", Some("owner@alpha.test"), Role::Owner).await;
        let member = svc.user("member@beta.test").await;
        let other = svc.user("other@gamma.test").await;
        let rival = svc.user_in("rival@gamma.test", Some("other@gamma.test"), Role::Admin).await;
        let revoked_old = svc.user("revoked@delta.test").await;
        let new_key = mgds_server::admin::rotate_key(&svc.state, &revoked_old.email).await.unwrap().api_key;
        assert_ne!(new_key, revoked_old.key);
        let revoked = TestUser { key: new_key, ..revoked_old.clone() };

        // The owner finds the people to share with by their exact addresses (as the app does).
        assert_eq!(svc.find_user(&owner, &member.email).await, member.id);
        assert_eq!(svc.find_user(&owner, "OTHER@gamma.test").await, other.id, "addresses match whatever their case");
        let project = create_project(svc, &owner, "private-p", false).await;
        let public_project = create_project(svc, &owner, "public-p", true).await;
        let (s, b) = svc
            .post(Some(&owner), &format!("/api/v1/projects/{project}/add_user"), json!({"user": uref(&member.id)}))
            .await;
        assert_eq!(s, 200, "add_user: {b}");
        // Default permissions: all of them.
        let (s, p) = svc.get(Some(&member), &format!("/api/v1/projects/{project}")).await;
        assert_eq!(s, 200, "{p}");
        let mut perms: Vec<&str> = p["permissions"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
        perms.sort_unstable();
        assert_eq!(perms, ALL_PERMISSIONS, "a member added without permissions gets all of them");

        let s_proj = svc.upload_sample(&owner, "proj.fastq", &fastq(2), json!({"project": pref(&project)})).await;
        let s_priv = svc.upload_sample(&owner, "priv.fastq", &fastq(2), json!({})).await;
        let s_pub = svc.upload_sample(&owner, "pub.fastq", &fastq(2), json!({})).await;
        set_visibility(svc, &owner, &s_pub, "public").await;
        let s_shared = svc.upload_sample(&owner, "shared.fastq", &fastq(2), json!({})).await;
        set_visibility(svc, &owner, &s_shared, "shared").await;
        let pre_proj =
            preupload(svc, &owner, json!({"project": pref(&project), "metadata": {"external_sample_id": "PRE-1"}}))
                .await;
        let pre_none = preupload(svc, &owner, json!({"metadata": {"external_sample_id": "PRE-2"}})).await;
        let (_, b) = svc.get(Some(&owner), &format!("/api/v1/samples/{pre_proj}")).await;
        assert_eq!(b["visibility"], json!("awaiting data"), "{b}");

        let mut md = Vec::new();
        for s in [&s_proj, &s_priv, &s_pub, &s_shared, &pre_proj, &pre_none] {
            md.push((s.clone(), metadata_of(svc, &owner, s).await));
        }

        let t_priv = tag(svc, &owner, "secret", &s_priv).await;
        let t_proj = tag(svc, &owner, "project-only", &s_proj).await;
        let t_pub = tag(svc, &owner, "open", &s_pub).await;

        let job_pub = svc.job("Classify", "classification", json!({})).await;
        let job_priv = owners_job(svc, &owner, "Private classify", false, false).await;
        let job_draft = owners_job(svc, &owner, "Draft classify", true, true).await;
        let a_priv = run(svc, &owner, &job_pub, &s_priv).await;
        let a_proj = run(svc, &owner, &job_priv, &s_proj).await;
        let a_pub = run(svc, &owner, &job_pub, &s_pub).await;
        let a_shared = run(svc, &owner, &job_pub, &s_shared).await;
        let analyses = vec![
            (s_priv.clone(), a_priv),
            (s_proj.clone(), a_proj),
            (s_pub.clone(), a_pub.clone()),
            (s_shared.clone(), a_shared),
        ];

        let doc_none = svc.upload_document(&owner, "nobody.txt", b"private notes").await;
        let doc_shared = svc.upload_document(&owner, "member.txt", b"for the member").await;
        let (s, b) = svc
            .post(Some(&owner), &format!("/api/v1/documents/{doc_shared}/add_user"), json!({"user": uref(&member.id)}))
            .await;
        assert_eq!(s, 200, "document add_user: {b}");

        let batch =
            mgds_server::admin::create_batch(&svc.state.db, &owner.email, "B-0001", Some("first run")).await.unwrap();
        let batch = id_of(&batch.uri);

        World {
            owner,
            orgmate,
            boss,
            head,
            member,
            other,
            rival,
            revoked,
            revoked_old,
            project,
            public_project,
            s_proj,
            s_priv,
            s_pub,
            s_shared,
            pre_proj,
            pre_none,
            md,
            t_priv,
            t_proj,
            t_pub,
            job_pub,
            job_priv,
            job_draft,
            builtin: svc.builtin_jobs().await,
            analyses,
            a_pub,
            doc_none,
            doc_shared,
            batch,
        }
    }

    fn user(&self, who: Who) -> Option<&TestUser> {
        match who {
            Who::Owner => Some(&self.owner),
            Who::Orgmate => Some(&self.orgmate),
            Who::Boss => Some(&self.boss),
            Who::Head => Some(&self.head),
            Who::Member => Some(&self.member),
            Who::Other => Some(&self.other),
            Who::Rival => Some(&self.rival),
            Who::Revoked => Some(&self.revoked),
            Who::Anon => None,
        }
    }

    fn md_of(&self, sample: &str) -> String {
        self.md.iter().find(|(s, _)| s == sample).unwrap().1.clone()
    }

    fn analysis_of(&self, sample: &str) -> String {
        self.analyses.iter().find(|(s, _)| s == sample).unwrap().1.clone()
    }

    /// What `who` may see of `kind`; `None` when the route needs credentials `who` lacks.
    fn visible(&self, kind: Kind, who: Who) -> Option<Vec<String>> {
        use Who::*;
        fn v(ids: &[&String]) -> Vec<String> {
            ids.iter().map(|s| (*s).clone()).collect()
        }
        Some(match kind {
            Kind::Samples => match who {
                // The organisation's admins and owners see every sample of its users.
                Owner | Boss | Head => {
                    v(&[&self.s_proj, &self.s_priv, &self.s_pub, &self.s_shared, &self.pre_proj, &self.pre_none])
                }
                Orgmate => v(&[&self.s_pub, &self.s_shared]),
                Member => v(&[&self.s_proj, &self.s_pub, &self.pre_proj]),
                Other | Rival | Revoked | Anon => v(&[&self.s_pub]),
            },
            Kind::PublicSamples => v(&[&self.s_pub]),
            Kind::Metadata => {
                let seen = self.visible(Kind::Samples, who)?;
                self.md.iter().filter(|(s, _)| seen.contains(s)).map(|(_, m)| m.clone()).collect()
            }
            Kind::Analyses => {
                let seen = self.visible(Kind::Samples, who)?;
                self.analyses.iter().filter(|(s, _)| seen.contains(s)).map(|(_, a)| a.clone()).collect()
            }
            Kind::PublicAnalyses => v(&[&self.a_pub]),
            Kind::Tags => match who {
                Anon => return None,
                Owner | Boss | Head => v(&[&self.t_priv, &self.t_proj, &self.t_pub]),
                Member => v(&[&self.t_proj, &self.t_pub]),
                Orgmate | Other | Rival | Revoked => v(&[&self.t_pub]),
            },
            Kind::Projects => match who {
                Owner | Member | Boss | Head => v(&[&self.project, &self.public_project]),
                Orgmate | Other | Rival | Revoked | Anon => v(&[&self.public_project]),
            },
            Kind::PublicProjects => v(&[&self.public_project]),
            Kind::Documents => match who {
                Anon => return None,
                Owner | Boss | Head => v(&[&self.doc_none, &self.doc_shared]),
                Member => v(&[&self.doc_shared]),
                Orgmate | Other | Rival | Revoked => vec![],
            },
            Kind::Users => match who {
                Anon => return None,
                // The member and `other` were looked up by their addresses (World::build).
                Owner => v(&[
                    &self.owner.id,
                    &self.orgmate.id,
                    &self.boss.id,
                    &self.head.id,
                    &self.member.id,
                    &self.other.id,
                ]),
                Orgmate | Boss | Head => v(&[&self.owner.id, &self.orgmate.id, &self.boss.id, &self.head.id]),
                Member => v(&[&self.member.id, &self.owner.id]),
                Other | Rival => v(&[&self.other.id, &self.rival.id]),
                Revoked => v(&[&self.revoked.id]),
            },
            Kind::Jobs => {
                let mut seen = match who {
                    Anon => return None,
                    Owner => v(&[&self.job_pub, &self.job_priv, &self.job_draft]),
                    // Seen through the analysis made with it on a sample they see.
                    Member | Boss | Head => v(&[&self.job_pub, &self.job_priv]),
                    Orgmate | Other | Rival | Revoked => v(&[&self.job_pub]),
                };
                seen.extend(self.builtin.iter().cloned());
                seen
            }
            Kind::Batches => match who {
                Anon => return None,
                Owner | Orgmate | Boss | Head => v(&[&self.batch]),
                Member | Other | Rival | Revoked => vec![],
            },
        })
    }

    /// Every id of `kind` that anyone may see.
    fn universe(&self, kind: Kind) -> Vec<String> {
        let mut all = BTreeSet::new();
        for who in EVERYONE {
            all.extend(self.visible(kind, who).unwrap_or_default());
        }
        all.into_iter().collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Reads

/// GET a list as `who`: exactly `want` (addresses under `/api/v1/<coll>/`) and an
/// `X-Total-Count` equal to its size; or 401 for `None`.
async fn check_list(
    svc: &Service,
    user: Option<&TestUser>,
    ctx: &str,
    path: &str,
    coll: &str,
    want: Option<Vec<String>>,
) {
    let r = send(svc, user, Method::GET, path, None).await;
    let ctx = format!("{ctx} GET {path}");
    let Some(want) = want else {
        assert_401(&r, &ctx);
        return;
    };
    assert_eq!(r.status, 200, "{ctx}: {}", r.text());
    let items = r.json();
    let items = items.as_array().unwrap_or_else(|| panic!("{ctx}: not an array: {}", r.text()));
    let got: BTreeSet<String> = items.iter().map(|x| x["$uri"].as_str().unwrap().to_string()).collect();
    assert_eq!(got.len(), items.len(), "{ctx}: duplicates in {}", r.text());
    let want: BTreeSet<String> = want.iter().map(|i| format!("/api/v1/{coll}/{i}")).collect();
    assert_eq!(got, want, "{ctx}: the list must hold exactly what the caller may see");
    assert_eq!(r.total(), want.len() as u64, "{ctx}: X-Total-Count must count only what the caller may see");
}

const LISTS: [(&str, &str, Kind); 14] = [
    ("/api/v1/samples", "samples", Kind::Samples),
    ("/api/v1/samples/public", "samples", Kind::PublicSamples),
    ("/api/v1/metadata", "metadata", Kind::Metadata),
    ("/api/v1/analyses", "analyses", Kind::Analyses),
    ("/api/v1/analyses/public", "analyses", Kind::PublicAnalyses),
    ("/api/v1/classifications", "classifications", Kind::Analyses),
    ("/api/v1/classifications/public", "classifications", Kind::PublicAnalyses),
    ("/api/v1/tags", "tags", Kind::Tags),
    ("/api/v1/projects", "projects", Kind::Projects),
    ("/api/v1/projects/public", "projects", Kind::PublicProjects),
    ("/api/v1/documents", "documents", Kind::Documents),
    ("/api/v1/users", "users", Kind::Users),
    ("/api/v1/jobs", "jobs", Kind::Jobs),
    ("/api/v1/sequencing/batches", "sequencing/batches", Kind::Batches),
];

#[tokio::test]
async fn lists_and_total_counts_hold_only_what_the_caller_may_see() {
    let svc = Service::start().await;
    let w = World::build(&svc).await;
    for who in EVERYONE {
        for (path, coll, kind) in LISTS {
            check_list(&svc, w.user(who), &format!("{who:?}"), path, coll, w.visible(kind, who)).await;
        }
    }

    // Filters and paging cannot widen the view: a filter naming every sample still counts only
    // the visible ones, a page of one still reports the visible total, and filtering analyses by
    // a hidden sample finds nothing.
    let all_samples: Vec<String> = w.universe(Kind::Samples).iter().map(|i| format!("/api/v1/samples/{i}")).collect();
    let every = json!({"$uri": {"$in": all_samples}}).to_string();
    for who in EVERYONE {
        let want = w.visible(Kind::Samples, who).unwrap();
        let path = with_query(&svc, "/api/v1/samples", &[("where", &every)]);
        check_list(&svc, w.user(who), &format!("{who:?}"), &path, "samples", Some(want.clone())).await;
        let path = with_query(&svc, "/api/v1/samples", &[("per_page", "1")]);
        let r = send(&svc, w.user(who), Method::GET, &path, None).await;
        assert_eq!(r.status, 200, "{who:?}: {}", r.text());
        assert_eq!(r.total(), want.len() as u64, "{who:?} GET {path}");
        assert_eq!(r.json().as_array().unwrap().len(), want.len().min(1), "{who:?} GET {path}");
        let by_owner = json!({"owner": {"$ref": format!("/api/v1/users/{}", w.owner.id)}}).to_string();
        let path = with_query(&svc, "/api/v1/samples", &[("where", &by_owner)]);
        check_list(&svc, w.user(who), &format!("{who:?}"), &path, "samples", Some(want)).await;
    }
    let hidden_from_member = json!({"sample": sref(&w.s_priv)}).to_string();
    let path = with_query(&svc, "/api/v1/analyses", &[("where", &hidden_from_member)]);
    check_list(&svc, Some(&w.member), "Member", &path, "analyses", Some(vec![])).await;
    check_list(&svc, Some(&w.owner), "Owner", &path, "analyses", Some(vec![w.analysis_of(&w.s_priv)])).await;
    let path = with_query(&svc, "/api/v1/metadata", &[("where", &json!({"external_sample_id": "PRE-2"}).to_string())]);
    check_list(&svc, Some(&w.member), "Member", &path, "metadata", Some(vec![])).await;
    check_list(&svc, Some(&w.owner), "Owner", &path, "metadata", Some(vec![w.md_of(&w.pre_none)])).await;
}

/// The GET routes of single records: path template, the kind deciding visibility, whether the
/// route needs credentials, the status of a visible record, and the collection its `$uri` is in.
const SINGLES: [(&str, Kind, bool, u16, Option<&str>); 17] = [
    ("/api/v1/samples/{id}", Kind::Samples, false, 200, Some("samples")),
    ("/api/v1/metadata/{id}", Kind::Metadata, false, 200, Some("metadata")),
    ("/api/v1/analyses/{id}", Kind::Analyses, false, 200, Some("analyses")),
    ("/api/v1/classifications/{id}", Kind::Analyses, false, 200, Some("classifications")),
    // No engine runs here: the analyses stay pending, so their results are a 400, not a 404.
    ("/api/v1/analyses/{id}/results", Kind::Analyses, false, 400, None),
    ("/api/v1/classifications/{id}/results", Kind::Analyses, false, 400, None),
    ("/api/v1/classifications/{id}/readlevel", Kind::Analyses, false, 400, None),
    ("/api/v1/classifications/{id}/kraken_report", Kind::Analyses, false, 400, None),
    ("/api/v1/analyses/{id}/files", Kind::Analyses, false, 400, None),
    ("/api/v1/analyses/{id}/file_details", Kind::Analyses, false, 400, None),
    ("/api/v1/tags/{id}", Kind::Tags, true, 200, Some("tags")),
    ("/api/v1/projects/{id}", Kind::Projects, false, 200, Some("projects")),
    ("/api/v1/projects/{id}/members", Kind::Projects, true, 200, None),
    ("/api/v1/documents/{id}", Kind::Documents, true, 200, Some("documents")),
    ("/api/v1/users/{id}", Kind::Users, true, 200, Some("users")),
    ("/api/v1/jobs/{id}", Kind::Jobs, true, 200, Some("jobs")),
    ("/api/v1/sequencing/batches/{id}", Kind::Batches, true, 200, Some("sequencing/batches")),
];

#[tokio::test]
async fn hidden_records_answer_byte_for_byte_like_missing_ones() {
    let svc = Service::start().await;
    let w = World::build(&svc).await;
    let mut hidden_checked = 0;
    for (tmpl, kind, protected, ok, coll) in SINGLES {
        let universe = w.universe(kind);
        assert!(!universe.is_empty(), "{tmpl}");
        for who in EVERYONE {
            let user = w.user(who);
            let missing_path = tmpl.replace("{id}", MISSING);
            let missing = send(&svc, user, Method::GET, &missing_path, None).await;
            let needs_key = protected && user.is_none();
            if needs_key {
                assert_401(&missing, &format!("{who:?} GET {missing_path}"));
            } else {
                assert_eq!(missing.status, 404, "{who:?} GET {missing_path}: {}", missing.text());
                assert_error(missing.status, &missing.json(), 404);
            }
            let seen = w.visible(kind, who).unwrap_or_default();
            for id in &universe {
                let path = tmpl.replace("{id}", id);
                let ctx = format!("{who:?} GET {path}");
                let r = send(&svc, user, Method::GET, &path, None).await;
                if needs_key {
                    assert_401(&r, &ctx);
                } else if seen.contains(id) {
                    // Who belongs to a project is shown to its owner and members only, even when
                    // the project itself is public.
                    let belongs =
                        matches!(who, Who::Owner | Who::Boss | Who::Head) || (who == Who::Member && *id == w.project);
                    let ok = if tmpl.ends_with("/members") && !belongs { 403 } else { ok };
                    assert_eq!(r.status, ok, "{ctx}: {}", r.text());
                    if let Some(coll) = coll {
                        assert_eq!(r.json()["$uri"], json!(format!("/api/v1/{coll}/{id}")), "{ctx}");
                    }
                } else {
                    assert_eq!(r.status, missing.status, "{ctx}: a hidden record must answer like a missing one");
                    assert_eq!(r.text(), missing.text(), "{ctx}: a hidden record must answer like a missing one");
                    assert_eq!(r.body, missing.body, "{ctx}");
                    hidden_checked += 1;
                }
            }
        }
    }
    // Every caller but the owner has something hidden on most routes.
    assert!(hidden_checked > 100, "only {hidden_checked} hidden records were checked");

    // The analyses are classifications: the other kinds' routes answer as for a missing id,
    // to everyone, the owner included (spec: 404 if the id is not of that analysis type).
    for tmpl in [
        "/api/v1/panels/{id}",
        "/api/v1/panels/{id}/results",
        "/api/v1/alignments/{id}",
        "/api/v1/functional_profiles/{id}",
        "/api/v1/functional_profiles/{id}/results",
    ] {
        for who in EVERYONE {
            let user = w.user(who);
            let missing = send(&svc, user, Method::GET, &tmpl.replace("{id}", MISSING), None).await;
            assert_eq!(missing.status, 404, "{who:?} GET {tmpl}: {}", missing.text());
            for id in w.universe(Kind::Analyses) {
                let path = tmpl.replace("{id}", &id);
                let r = send(&svc, user, Method::GET, &path, None).await;
                assert_eq!(r.status, 404, "{who:?} GET {path}: {}", r.text());
                assert_eq!(
                    r.body, missing.body,
                    "{who:?} GET {path}: another kind's id must answer like a missing one"
                );
            }
        }
    }
}

#[tokio::test]
async fn anonymous_callers_read_public_records_and_get_401_on_protected_routes() {
    let svc = Service::start().await;
    let w = World::build(&svc).await;
    // Public records are readable without credentials.
    for path in [
        format!("/api/v1/samples/{}", w.s_pub),
        format!("/api/v1/metadata/{}", w.md_of(&w.s_pub)),
        format!("/api/v1/analyses/{}", w.a_pub),
        format!("/api/v1/classifications/{}", w.a_pub),
        format!("/api/v1/projects/{}", w.public_project),
    ] {
        let (s, b) = svc.get(None, &path).await;
        assert_eq!(s, 200, "GET {path}: {b}");
        assert_eq!(b["$uri"], json!(path));
    }
    // Protected reads.
    let reads = [
        "/api/v1/account".to_string(),
        "/api/v1/documents".into(),
        format!("/api/v1/documents/{}", w.doc_shared),
        "/api/v1/tags".into(),
        format!("/api/v1/tags/{}", w.t_pub),
        "/api/v1/users".into(),
        format!("/api/v1/users/{}", w.owner.id),
        "/api/v1/jobs".into(),
        format!("/api/v1/jobs/{}", w.job_pub),
        "/api/v1/sequencing/batches".into(),
        format!("/api/v1/sequencing/batches/{}", w.batch),
        format!("/api/v1/projects/{}/members", w.public_project),
    ];
    for path in &reads {
        let r = send(&svc, None, Method::GET, path, None).await;
        assert_401(&r, &format!("anonymous GET {path}"));
    }
    // Every write, aimed at records anyone may see so visibility is not what refuses them.
    for (method, path, body) in anonymous_writes(&w) {
        let r = send(&svc, None, method.clone(), &path, body.as_ref()).await;
        assert_401(&r, &format!("anonymous {method} {path}"));
    }
    // Nothing changed.
    let (s, b) = svc.get(None, &format!("/api/v1/samples/{}", w.s_pub)).await;
    assert_eq!((s, b["visibility"].clone()), (200, json!("public")));
    let (s, b) = svc.get(None, &format!("/api/v1/projects/{}", w.public_project)).await;
    assert_eq!((s, b["public"].clone(), b["description"].clone()), (200, json!(true), Value::Null));
    let (_, docs) = svc.get(Some(&w.owner), "/api/v1/documents").await;
    assert_eq!(docs.as_array().unwrap().len(), 2);
    assert_eq!(
        docs.as_array()
            .unwrap()
            .iter()
            .find(|d| d["$uri"] == json!(format!("/api/v1/documents/{}", w.doc_none)))
            .unwrap()["downloaders"],
        json!([])
    );
}

/// Every POST, PATCH and DELETE route with a valid body, naming records anyone may see.
fn anonymous_writes(w: &World) -> Vec<(Method, String, Option<Value>)> {
    let q = &w.public_project;
    let d = &w.doc_none;
    let s = &w.s_pub;
    vec![
        (Method::POST, "/api/v1/samples/preupload".into(), Some(json!({}))),
        (Method::POST, "/api/v1/samples/init_upload".into(), Some(json!({"filename": "a.fastq", "size": 10}))),
        (Method::POST, "/api/v1/samples/confirm_upload".into(), Some(json!({"sample_id": s}))),
        (Method::POST, "/api/v1/samples/cancel_upload".into(), Some(json!({"sample_id": s}))),
        (Method::PATCH, format!("/api/v1/samples/{s}"), Some(json!({"visibility": "private"}))),
        (Method::DELETE, format!("/api/v1/samples/{s}"), None),
        (Method::POST, format!("/api/v1/samples/{s}/download_uri"), None),
        (Method::PATCH, format!("/api/v1/metadata/{}", w.md_of(s)), Some(json!({"name": "anon"}))),
        (Method::POST, "/api/v1/tags".into(), Some(json!({"name": "anon", "sample": sref(s)}))),
        (Method::POST, "/api/v1/projects".into(), Some(json!({"project_name": "anon-p"}))),
        (Method::PATCH, format!("/api/v1/projects/{q}"), Some(json!({"description": "anon"}))),
        (Method::DELETE, format!("/api/v1/projects/{q}"), None),
        (Method::POST, format!("/api/v1/projects/{q}/add_user"), Some(json!({"user": uref(&w.other.id)}))),
        (Method::POST, format!("/api/v1/projects/{q}/remove_user"), Some(json!({"user": uref(&w.member.id)}))),
        (Method::POST, format!("/api/v1/projects/{q}/change_sharing"), Some(json!({"public": false}))),
        (Method::POST, format!("/api/v1/jobs/{}/run", w.job_pub), Some(json!({"sample": sref(s), "job_args": {}}))),
        (Method::POST, "/api/v1/documents/init_upload".into(), Some(json!({"filename": "a.txt", "size": 3}))),
        (Method::POST, "/api/v1/documents/confirm_upload".into(), Some(json!({"document_id": d}))),
        (Method::PATCH, format!("/api/v1/documents/{d}"), Some(json!({"description": "anon"}))),
        (Method::PATCH, format!("/api/v1/documents/{d}/rename"), Some(json!({"filename": "b.txt"}))),
        (Method::DELETE, format!("/api/v1/documents/{d}"), None),
        (Method::POST, format!("/api/v1/documents/{d}/add_user"), Some(json!({"user": uref(&w.other.id)}))),
        (Method::POST, format!("/api/v1/documents/{d}/remove_user"), Some(json!({"user": uref(&w.member.id)}))),
        (Method::POST, format!("/api/v1/documents/{d}/download_uri"), None),
    ]
}

#[tokio::test]
async fn anonymous_writes_get_401_whatever_their_body() {
    // Credentials come before the body: an anonymous caller learns nothing about a route's
    // body rules, it is told to sign in.
    let svc = Service::start().await;
    let w = World::build(&svc).await;
    let mut wrong = Vec::new();
    let mut tried = 0;
    for (method, path, body) in anonymous_writes(&w) {
        if body.is_none() {
            continue;
        }
        for bad in [json!("not an object"), json!({"no_such_field": 1})] {
            tried += 1;
            let r = send(&svc, None, method.clone(), &path, Some(&bad)).await;
            if r.status != 401 || r.headers.get(WWW_AUTHENTICATE).is_none() {
                wrong.push(format!("{method} {path} with body {bad} -> {} {}", r.status, r.text()));
            }
        }
    }
    assert!(tried >= 30, "{tried}");
    assert!(
        wrong.is_empty(),
        "anonymous writes must answer 401 before reading the body; {} of {tried} did not:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[tokio::test]
async fn a_replaced_key_answers_401_everywhere_and_the_new_key_works_at_once() {
    let svc = Service::start().await;
    let w = World::build(&svc).await;
    let old = &w.revoked_old;
    let paths = [
        "/api/v1/account".to_string(),
        "/api/v1/samples".into(),
        format!("/api/v1/samples/{}", w.s_pub),
        "/api/v1/samples/public".into(),
        "/api/v1/metadata".into(),
        "/api/v1/analyses".into(),
        "/api/v1/analyses/public".into(),
        format!("/api/v1/analyses/{}", w.a_pub),
        "/api/v1/classifications/public".into(),
        "/api/v1/projects".into(),
        "/api/v1/projects/public".into(),
        format!("/api/v1/projects/{}", w.public_project),
        "/api/v1/tags".into(),
        "/api/v1/documents".into(),
        "/api/v1/users".into(),
        "/api/v1/jobs".into(),
        "/api/v1/sequencing/batches".into(),
    ];
    let never_valid = TestUser { key: "f".repeat(48), ..old.clone() };
    let mut accepted = Vec::new();
    for path in &paths {
        let r = send(&svc, Some(old), Method::GET, path, None).await;
        // A replaced key is indistinguishable from one that never existed.
        let n = send(&svc, Some(&never_valid), Method::GET, path, None).await;
        if r.status != 401 {
            assert_eq!(r.status, n.status, "GET {path}: a replaced key must answer like an unknown one");
            accepted.push(format!("GET {path} -> {} (the request is served as anonymous)", r.status));
            continue;
        }
        assert_401(&r, &format!("replaced key GET {path}"));
        assert_401(&n, &format!("unknown key GET {path}"));
        assert_eq!(r.body, n.body, "GET {path}: a replaced key must answer like an unknown one");
    }
    // The old key in the X-API-Key header, and on a write.
    let r = svc.req(Method::GET, "/api/v1/account").header("X-API-Key", &old.key).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert!(r.headers().get(WWW_AUTHENTICATE).is_some());
    let r = send(&svc, Some(old), Method::POST, "/api/v1/projects", Some(&json!({"project_name": "revoked-p"}))).await;
    assert_401(&r, "replaced key POST /api/v1/projects");

    // Rotation takes effect immediately in both directions, on the very next request.
    let fresh = svc.user("fresh@epsilon.test").await;
    let (s, _) = svc.get(Some(&fresh), "/api/v1/account").await;
    assert_eq!(s, 200);
    let new_key = mgds_server::admin::rotate_key(&svc.state, &fresh.email).await.unwrap().api_key;
    let renewed = TestUser { key: new_key, ..fresh.clone() };
    let (s, acct) = svc.get(Some(&renewed), "/api/v1/account").await;
    assert_eq!(s, 200, "the new key must work on the very next request: {acct}");
    assert_eq!(acct["user"]["$ref"], json!(format!("/api/v1/users/{}", fresh.id)));
    let r = send(&svc, Some(&fresh), Method::GET, "/api/v1/account", None).await;
    assert_401(&r, "the key replaced a moment ago");
    let r = svc.req(Method::GET, "/api/v1/account").header("X-API-Key", &renewed.key).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200, "the new key in X-API-Key");
    // The revoked user's new key sees what any other stranger sees.
    check_list(&svc, Some(&w.revoked), "Revoked", "/api/v1/samples", "samples", w.visible(Kind::Samples, Who::Revoked))
        .await;
    assert!(
        accepted.is_empty(),
        "a replaced (or unknown) API key must answer 401 on every route, not be served as anonymous:\n{}",
        accepted.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Writes

/// A write to check: who (`None` for the can_see_files-only viewer), method, path, body, answer.
type WriteCase = (Option<Who>, Method, String, Option<Value>, Want);

/// What a write must answer.
enum Want {
    /// This status (for 401 also the challenge; for errors the body shape).
    Is(u16),
    /// Exactly what the same request answers for a missing record: the hidden id, wherever it
    /// appears in the path or body, is replaced with [`MISSING`]. For ids in the path the bodies
    /// must be byte-identical; for ids in the body (which the message may echo) identical once the
    /// echoed id is replaced too. The status must be the given one.
    LikeMissing(String, u16),
}

async fn check_write(
    svc: &Service,
    who: &str,
    user: Option<&TestUser>,
    method: Method,
    path: &str,
    body: Option<Value>,
    want: Want,
) -> Raw {
    let ctx = format!("{who} {method} {path} {}", body.as_ref().map(Value::to_string).unwrap_or_default());
    let r = send(svc, user, method.clone(), path, body.as_ref()).await;
    match want {
        Want::Is(401) => assert_401(&r, &ctx),
        Want::Is(code) => {
            assert_eq!(r.status, code, "{ctx}: {}", r.text());
            if code >= 400 {
                assert_error(r.status, &r.json(), code);
            }
        }
        Want::LikeMissing(hidden, code) => {
            let mpath = path.replace(&hidden, MISSING);
            let mbody =
                body.as_ref().map(|b| serde_json::from_str::<Value>(&b.to_string().replace(&hidden, MISSING)).unwrap());
            assert!(mpath != path || mbody != body, "{ctx}: {hidden} appears in neither path nor body");
            let m = send(svc, user, method.clone(), &mpath, mbody.as_ref()).await;
            assert_eq!(m.status, code, "{ctx} (with a missing id): {}", m.text());
            assert_error(m.status, &m.json(), code);
            assert_eq!(r.status, m.status, "{ctx}: a hidden record must answer like a missing one: {}", r.text());
            if path.contains(&hidden) {
                assert_eq!(r.body, m.body, "{ctx}: a hidden record must answer byte for byte like a missing one");
            } else {
                assert_eq!(
                    r.text().replace(&hidden, MISSING),
                    m.text(),
                    "{ctx}: a hidden record must answer like a missing one"
                );
            }
        }
    }
    r
}

#[tokio::test]
async fn writes_answer_403_to_viewers_404_to_strangers_401_to_anonymous_and_succeed_for_the_owner() {
    use Want::{Is, LikeMissing as Hidden};
    use Who::*;
    let svc = Service::start().await;
    let w = World::build(&svc).await;
    // A member who may only look.
    let viewer = svc.user("viewer@zeta.test").await;
    svc.find_user(&w.owner, &viewer.email).await;
    let (s, b) = svc
        .post(
            Some(&w.owner),
            &format!("/api/v1/projects/{}/add_user", w.project),
            json!({"user": uref(&viewer.id), "permissions": ["can_see_files"]}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = svc.get(Some(&viewer), &format!("/api/v1/samples/{}", w.s_proj)).await;
    assert_eq!(s, 200, "a can_see_files member sees the project's samples: {b}");
    // A sample of the stranger's own, to point at the owner's records from request bodies.
    let o_pre = preupload(&svc, &w.other, json!({})).await;

    let (sp, sv, su, ss, pp, pn) = (&w.s_proj, &w.s_priv, &w.s_pub, &w.s_shared, &w.pre_proj, &w.pre_none);
    let (p, q) = (&w.project, &w.public_project);
    let (dn, ds) = (&w.doc_none, &w.doc_shared);
    let h = |id: &String| Hidden(id.clone(), 404);
    // Hidden samples named in a body are a bad reference: the server answers 400 whether the
    // sample is hidden or missing.
    let hb = |id: &String| Hidden(id.clone(), 400);
    let vis = |v: &str| Some(json!({"visibility": v}));

    // (who, method, path, body, want); `None` for who means the viewer.
    let mut cases: Vec<WriteCase> = Vec::new();
    let mut add = |who: Option<Who>, m: Method, path: String, body: Option<Value>, want: Want| {
        cases.push((who, m, path, body, want))
    };

    // PATCH and DELETE /samples/{id}.
    for (m, body) in [(Method::PATCH, vis("public")), (Method::DELETE, None)] {
        let path = |id: &String| format!("/api/v1/samples/{id}");
        add(Some(Member), m.clone(), path(sp), body.clone(), Is(403));
        add(Some(Member), m.clone(), path(su), body.clone(), Is(403));
        add(Some(Member), m.clone(), path(pp), body.clone(), Is(403));
        add(Some(Member), m.clone(), path(sv), body.clone(), h(sv));
        add(Some(Member), m.clone(), path(ss), body.clone(), h(ss));
        add(Some(Member), m.clone(), path(pn), body.clone(), h(pn));
        add(None, m.clone(), path(sp), body.clone(), Is(403));
        add(Some(Orgmate), m.clone(), path(ss), body.clone(), Is(403));
        add(Some(Orgmate), m.clone(), path(su), body.clone(), Is(403));
        add(Some(Orgmate), m.clone(), path(sp), body.clone(), h(sp));
        for who in [Other, Rival] {
            add(Some(who), m.clone(), path(su), body.clone(), Is(403));
            for id in [sp, sv, ss, pp, pn] {
                add(Some(who), m.clone(), path(id), body.clone(), h(id));
            }
        }
        for id in [sp, su] {
            add(Some(Anon), m.clone(), path(id), body.clone(), Is(401));
        }
    }
    // POST /samples/{id}/download_uri: whoever sees a file may fetch it, unless a project
    // membership withholds can_download_files.
    let dl = |id: &String| format!("/api/v1/samples/{id}/download_uri");
    add(None, Method::POST, dl(sp), None, Is(403));
    add(None, Method::POST, dl(su), None, Is(200));
    add(Some(Member), Method::POST, dl(sv), None, h(sv));
    add(Some(Member), Method::POST, dl(ss), None, h(ss));
    add(Some(Orgmate), Method::POST, dl(sp), None, h(sp));
    add(Some(Other), Method::POST, dl(sp), None, h(sp));
    add(Some(Other), Method::POST, dl(sv), None, h(sv));
    add(Some(Other), Method::POST, dl(pn), None, h(pn));
    add(Some(Other), Method::POST, dl(su), None, Is(200));
    add(Some(Orgmate), Method::POST, dl(ss), None, Is(200));
    add(Some(Anon), Method::POST, dl(su), None, Is(401));
    add(Some(Member), Method::POST, dl(sp), None, Is(200));
    add(Some(Member), Method::POST, dl(pp), None, Is(400));
    add(Some(Owner), Method::POST, dl(sv), None, Is(200));

    // PATCH /metadata/{id}: owner, or project members with can_edit_metadata.
    let md = |id: &String| format!("/api/v1/metadata/{}", w.md_of(id));
    let mdb = |who: &str| Some(json!({"description": format!("edited by {who}")}));
    add(None, Method::PATCH, md(sp), mdb("viewer"), Is(403));
    add(Some(Member), Method::PATCH, md(su), mdb("member"), Is(403));
    add(Some(Orgmate), Method::PATCH, md(ss), mdb("orgmate"), Is(403));
    add(Some(Orgmate), Method::PATCH, md(su), mdb("orgmate"), Is(403));
    add(Some(Other), Method::PATCH, md(su), mdb("other"), Is(403));
    add(Some(Member), Method::PATCH, md(sv), mdb("member"), h(&w.md_of(sv)));
    add(Some(Member), Method::PATCH, md(pn), mdb("member"), h(&w.md_of(pn)));
    add(Some(Orgmate), Method::PATCH, md(sp), mdb("orgmate"), h(&w.md_of(sp)));
    add(Some(Other), Method::PATCH, md(sp), mdb("other"), h(&w.md_of(sp)));
    add(Some(Other), Method::PATCH, md(ss), mdb("other"), h(&w.md_of(ss)));
    add(Some(Anon), Method::PATCH, md(su), mdb("anon"), Is(401));
    add(Some(Member), Method::PATCH, md(sp), mdb("member"), Is(200));
    add(Some(Member), Method::PATCH, md(pp), mdb("member"), Is(200));
    add(Some(Owner), Method::PATCH, md(sv), mdb("owner"), Is(200));

    // POST /tags: tagging is editing the sample.
    let tb = |name: &str, id: &String| Some(json!({"name": name, "sample": sref(id)}));
    add(None, Method::POST, "/api/v1/tags".into(), tb("v", sp), Is(403));
    add(Some(Member), Method::POST, "/api/v1/tags".into(), tb("m", su), Is(403));
    add(Some(Orgmate), Method::POST, "/api/v1/tags".into(), tb("o", ss), Is(403));
    add(Some(Other), Method::POST, "/api/v1/tags".into(), tb("x", su), Is(403));
    add(Some(Member), Method::POST, "/api/v1/tags".into(), tb("m", sv), hb(sv));
    add(Some(Orgmate), Method::POST, "/api/v1/tags".into(), tb("o", sv), hb(sv));
    add(Some(Other), Method::POST, "/api/v1/tags".into(), tb("x", sp), hb(sp));
    add(Some(Anon), Method::POST, "/api/v1/tags".into(), tb("a", su), Is(401));
    add(Some(Member), Method::POST, "/api/v1/tags".into(), tb("member-tag", sp), Is(200));
    add(Some(Owner), Method::POST, "/api/v1/tags".into(), tb("owner-tag", sv), Is(200));

    // POST /jobs/{id}/run: running is adding to the sample.
    let run = |job: &String| format!("/api/v1/jobs/{job}/run");
    let rb = |id: &String| Some(json!({"sample": sref(id), "job_args": {}}));
    add(None, Method::POST, run(&w.job_pub), rb(sp), Is(403));
    add(Some(Member), Method::POST, run(&w.job_pub), rb(su), Is(403));
    add(Some(Other), Method::POST, run(&w.job_pub), rb(su), Is(403));
    add(Some(Orgmate), Method::POST, run(&w.job_pub), rb(ss), Is(403));
    add(Some(Other), Method::POST, run(&w.job_pub), rb(sv), hb(sv));
    add(Some(Member), Method::POST, run(&w.job_pub), rb(ss), hb(ss));
    add(Some(Other), Method::POST, run(&w.job_priv), rb(su), h(&w.job_priv));
    add(Some(Member), Method::POST, run(&w.job_draft), rb(sp), h(&w.job_draft));
    add(Some(Anon), Method::POST, run(&w.job_pub), rb(su), Is(401));
    add(Some(Member), Method::POST, run(&w.job_pub), rb(sp), Is(200));
    add(Some(Member), Method::POST, run(&w.job_priv), rb(sp), Is(200));
    add(Some(Owner), Method::POST, run(&w.job_pub), rb(sv), Is(200));

    // Documents: only the uploader and their organisation's admins change or share them.
    let doc = |id: &String| format!("/api/v1/documents/{id}");
    let desc = Some(json!({"description": "changed"}));
    let ren = Some(json!({"filename": "renamed.txt"}));
    let u_other = Some(json!({"user": uref(&w.other.id)}));
    let u_member = Some(json!({"user": uref(&w.member.id)}));
    for (m, suffix, body) in [
        (Method::PATCH, "", desc.clone()),
        (Method::PATCH, "/rename", ren.clone()),
        (Method::DELETE, "", None),
        (Method::POST, "/add_user", u_other.clone()),
        (Method::POST, "/remove_user", u_member.clone()),
    ] {
        add(Some(Member), m.clone(), format!("{}{suffix}", doc(ds)), body.clone(), Is(403));
        add(Some(Member), m.clone(), format!("{}{suffix}", doc(dn)), body.clone(), h(dn));
        add(Some(Other), m.clone(), format!("{}{suffix}", doc(ds)), body.clone(), h(ds));
        add(Some(Orgmate), m.clone(), format!("{}{suffix}", doc(dn)), body.clone(), h(dn));
        add(Some(Revoked), m.clone(), format!("{}{suffix}", doc(ds)), body.clone(), h(ds));
        add(Some(Anon), m.clone(), format!("{}{suffix}", doc(ds)), body.clone(), Is(401));
        add(Some(Rival), m.clone(), format!("{}{suffix}", doc(dn)), body.clone(), h(dn));
    }
    add(Some(Member), Method::POST, format!("{}/download_uri", doc(ds)), None, Is(200));
    add(Some(Member), Method::POST, format!("{}/download_uri", doc(dn)), None, h(dn));
    add(Some(Other), Method::POST, format!("{}/download_uri", doc(ds)), None, h(ds));
    add(Some(Anon), Method::POST, format!("{}/download_uri", doc(ds)), None, Is(401));
    add(Some(Boss), Method::POST, format!("{}/download_uri", doc(dn)), None, Is(200));
    add(Some(Owner), Method::POST, format!("{}/download_uri", doc(dn)), None, Is(200));

    // Records named in request bodies: hidden ones are a bad reference (400) exactly like missing
    // ones; visible ones the caller may not use are 403.
    let tref = |id: &String| json!({"$ref": format!("/api/v1/tags/{id}")});
    let aref = |id: &String| json!({"$ref": format!("/api/v1/analyses/{id}")});
    let own = format!("/api/v1/samples/{o_pre}");
    add(Some(Other), Method::PATCH, own.clone(), Some(json!({"tags": [tref(&w.t_priv)]})), hb(&w.t_priv));
    add(Some(Other), Method::PATCH, own.clone(), Some(json!({"tags": [tref(&w.t_proj)]})), hb(&w.t_proj));
    add(Some(Other), Method::PATCH, own.clone(), Some(json!({"project": pref(p)})), hb(p));
    add(Some(Other), Method::PATCH, own.clone(), Some(json!({"project": pref(q)})), Is(403));
    add(Some(Other), Method::POST, "/api/v1/samples/preupload".into(), Some(json!({"project": pref(p)})), hb(p));
    add(Some(Other), Method::POST, "/api/v1/samples/preupload".into(), Some(json!({"project": pref(q)})), Is(403));
    add(
        Some(Orgmate),
        Method::POST,
        "/api/v1/samples/init_upload".into(),
        Some(json!({"filename": "x.fastq", "size": 10, "project": pref(p)})),
        hb(p),
    );
    add(None, Method::POST, "/api/v1/samples/preupload".into(), Some(json!({"project": pref(p)})), Is(403));
    add(
        Some(Member),
        Method::POST,
        run(&w.job_pub),
        Some(
            json!({"sample": sref(sp), "job_args": {}, "dependencies": [{"analysis": aref(&w.analysis_of(sv)), "download_path": "in"}]}),
        ),
        hb(&w.analysis_of(sv)),
    );
    add(
        Some(Member),
        Method::POST,
        run(&w.job_pub),
        Some(
            json!({"sample": sref(sp), "job_args": {}, "dependencies": [{"analysis": aref(&w.analysis_of(sp)), "download_path": "in"}]}),
        ),
        Is(200),
    );

    // Projects: only the owner changes them or their members.
    let proj = |id: &String| format!("/api/v1/projects/{id}");
    for (m, suffix, body) in [
        (Method::PATCH, "", desc.clone()),
        (Method::DELETE, "", None),
        (Method::POST, "/add_user", u_other.clone()),
        (Method::POST, "/remove_user", u_member.clone()),
        (Method::POST, "/change_sharing", Some(json!({"public": true}))),
    ] {
        add(Some(Member), m.clone(), format!("{}{suffix}", proj(p)), body.clone(), Is(403));
        add(Some(Member), m.clone(), format!("{}{suffix}", proj(q)), body.clone(), Is(403));
        add(None, m.clone(), format!("{}{suffix}", proj(p)), body.clone(), Is(403));
        add(Some(Other), m.clone(), format!("{}{suffix}", proj(p)), body.clone(), h(p));
        add(Some(Other), m.clone(), format!("{}{suffix}", proj(q)), body.clone(), Is(403));
        add(Some(Orgmate), m.clone(), format!("{}{suffix}", proj(p)), body.clone(), h(p));
        add(Some(Rival), m.clone(), format!("{}{suffix}", proj(q)), body.clone(), Is(403));
        add(Some(Rival), m.clone(), format!("{}{suffix}", proj(p)), body.clone(), h(p));
        add(Some(Anon), m.clone(), format!("{}{suffix}", proj(q)), body.clone(), Is(401));
    }

    for (who, m, path, body, want) in cases {
        let (label, user) = match who {
            Some(who) => (format!("{who:?}"), w.user(who)),
            None => ("Viewer (can_see_files only)".to_string(), Some(&viewer)),
        };
        check_write(&svc, &label, user, m, &path, body, want).await;
    }

    // None of the refused writes changed anything.
    let (s, b) = svc.get(Some(&w.other), &format!("/api/v1/samples/{sp}")).await;
    assert_eq!(s, 404, "a refused PATCH must not have made the sample public: {b}");
    let (s, b) = svc.get(Some(&w.owner), "/api/v1/samples").await;
    assert_eq!((s, b.as_array().unwrap().len()), (200, 6), "refused DELETEs must not have removed samples: {b}");
    for (id, want) in [(sp, "private"), (ss, "shared"), (su, "public")] {
        let (_, b) = svc.get(Some(&w.owner), &format!("/api/v1/samples/{id}")).await;
        assert_eq!(b["visibility"], json!(want), "{b}");
    }
    let (s, b) = svc.get(Some(&w.other), &format!("/api/v1/projects/{p}")).await;
    assert_eq!(s, 404, "a refused change_sharing must not have made the project public: {b}");
    let (_, b) = svc.get(Some(&w.owner), &format!("/api/v1/projects/{q}")).await;
    assert_eq!(b["description"], Value::Null, "{b}");
    let (_, members) = svc.get(Some(&w.owner), &format!("/api/v1/projects/{p}/members")).await;
    let users: BTreeSet<String> =
        members.as_array().unwrap().iter().map(|m| id_of(m["user"]["$ref"].as_str().unwrap())).collect();
    assert_eq!(users, [w.owner.id.clone(), w.member.id.clone(), viewer.id.clone()].into_iter().collect(), "{members}");
    let (_, d) = svc.get(Some(&w.owner), &doc(ds)).await;
    assert_eq!((d["description"].clone(), d["filename"].clone()), (Value::Null, json!("member.txt")), "{d}");
    assert_eq!(d["downloaders"], json!([uref(&w.member.id)]), "{d}");
    let (_, d) = svc.get(Some(&w.owner), &doc(dn)).await;
    assert_eq!(d["description"], Value::Null, "{d}");
    // The member's metadata edit went through, and the viewer's did not.
    let (_, m) = svc.get(Some(&w.owner), &md(sp)).await;
    assert_eq!(m["description"], json!("edited by member"), "{m}");
    let (_, m) = svc.get(Some(&w.owner), &md(su)).await;
    assert_eq!(m["description"], Value::Null, "{m}");

    // The owner and the organisation admin succeed.
    let (s, b) = svc.patch(Some(&w.owner), &format!("/api/v1/samples/{sv}"), json!({"visibility": "private"})).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = svc.patch(Some(&w.owner), &proj(p), json!({"description": "changed"})).await;
    assert_eq!((s, b["description"].clone()), (200, json!("changed")), "{b}");
    let (s, b) = svc.post(Some(&w.owner), &format!("{}/add_user", proj(p)), json!({"user": uref(&w.other.id)})).await;
    assert_eq!(s, 200, "{b}");
    let (s, _) = svc.get(Some(&w.other), &proj(p)).await;
    assert_eq!(s, 200, "a new member sees the project");
    let (s, b) =
        svc.post(Some(&w.owner), &format!("{}/remove_user", proj(p)), json!({"user": uref(&w.other.id)})).await;
    assert_eq!(s, 200, "{b}");
    let (s, _) = svc.get(Some(&w.other), &proj(p)).await;
    assert_eq!(s, 404, "a removed member no longer sees the project");
    let (s, b) = svc.post(Some(&w.owner), &format!("{}/change_sharing", proj(q)), json!({"public": false})).await;
    assert_eq!((s, b["public"].clone()), (200, json!(false)), "{b}");
    let hidden = send(&svc, None, Method::GET, &proj(q), None).await;
    let missing = send(&svc, None, Method::GET, &proj(&MISSING.to_string()), None).await;
    assert_eq!(
        (hidden.status, &hidden.body),
        (404, &missing.body),
        "a project made private is hidden from anonymous callers"
    );
    let (s, b) = svc.patch(Some(&w.owner), &doc(dn), json!({"description": "changed"})).await;
    assert_eq!((s, b["description"].clone()), (200, json!("changed")), "{b}");
    let (s, b) = svc.patch(Some(&w.owner), &format!("{}/rename", doc(dn)), json!({"filename": "renamed.txt"})).await;
    assert_eq!((s, b["filename"].clone()), (200, json!("renamed.txt")), "{b}");
    let (s, b) = svc.post(Some(&w.boss), &format!("{}/add_user", doc(dn)), json!({"user": uref(&w.orgmate.id)})).await;
    assert_eq!(s, 200, "an organisation admin may share the organisation's documents: {b}");
    let (s, _) = svc.get(Some(&w.orgmate), &doc(dn)).await;
    assert_eq!(s, 200, "a downloader sees the document");
    let (s, b) =
        svc.post(Some(&w.owner), &format!("{}/remove_user", doc(dn)), json!({"user": uref(&w.orgmate.id)})).await;
    assert_eq!((s, b["downloaders"].clone()), (200, json!([])), "{b}");
    let (s, _) = svc.get(Some(&w.orgmate), &doc(dn)).await;
    assert_eq!(s, 404, "a removed downloader no longer sees the document");
    let (s, b) = svc.delete(Some(&w.owner), &doc(dn)).await;
    assert_eq!(s, 204, "{b}");
    let (s, _) = svc.get(Some(&w.owner), &doc(dn)).await;
    assert_eq!(s, 404);
    let (s, b) = svc.delete(Some(&w.owner), &format!("/api/v1/samples/{sv}")).await;
    assert_eq!(s, 204, "{b}");
    let (s, _) = svc.get(Some(&w.owner), &format!("/api/v1/samples/{sv}")).await;
    assert_eq!(s, 404);
    let (s, b) = svc.delete(Some(&w.owner), &proj(q)).await;
    assert_eq!(s, 204, "{b}");
    let (s, _) = svc.get(Some(&w.owner), &proj(q)).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn a_member_removed_from_a_project_no_longer_sees_its_private_records() {
    let svc = Service::start().await;
    let w = World::build(&svc).await;
    let m = Some(&w.member);
    // Before: the member sees the project's samples.
    check_list(&svc, m, "Member", "/api/v1/samples", "samples", w.visible(Kind::Samples, Who::Member)).await;
    let (s, b) = svc
        .post(
            Some(&w.owner),
            &format!("/api/v1/projects/{}/remove_user", w.project),
            json!({"user": uref(&w.member.id)}),
        )
        .await;
    assert_eq!(s, 200, "{b}");

    check_list(&svc, m, "removed member", "/api/v1/samples", "samples", Some(vec![w.s_pub.clone()])).await;
    check_list(&svc, m, "removed member", "/api/v1/metadata", "metadata", Some(vec![w.md_of(&w.s_pub)])).await;
    check_list(&svc, m, "removed member", "/api/v1/analyses", "analyses", Some(vec![w.a_pub.clone()])).await;
    check_list(&svc, m, "removed member", "/api/v1/tags", "tags", Some(vec![w.t_pub.clone()])).await;
    check_list(&svc, m, "removed member", "/api/v1/projects", "projects", Some(vec![w.public_project.clone()])).await;
    check_list(
        &svc,
        m,
        "removed member",
        "/api/v1/jobs",
        "jobs",
        Some([vec![w.job_pub.clone()], w.builtin.clone()].concat()),
    )
    .await;
    // Sharing a document is separate from the project.
    check_list(&svc, m, "removed member", "/api/v1/documents", "documents", Some(vec![w.doc_shared.clone()])).await;

    let gets = [
        format!("/api/v1/samples/{}", w.s_proj),
        format!("/api/v1/samples/{}", w.pre_proj),
        format!("/api/v1/metadata/{}", w.md_of(&w.s_proj)),
        format!("/api/v1/analyses/{}", w.analysis_of(&w.s_proj)),
        format!("/api/v1/tags/{}", w.t_proj),
        format!("/api/v1/projects/{}", w.project),
        format!("/api/v1/projects/{}/members", w.project),
        format!("/api/v1/jobs/{}", w.job_priv),
    ];
    for path in gets {
        let hidden_id = if path.ends_with("/members") { w.project.clone() } else { id_of(&path) };
        check_write(&svc, "removed member", m, Method::GET, &path, None, Want::LikeMissing(hidden_id, 404)).await;
    }
    check_write(
        &svc,
        "removed member",
        m,
        Method::POST,
        &format!("/api/v1/samples/{}/download_uri", w.s_proj),
        None,
        Want::LikeMissing(w.s_proj.clone(), 404),
    )
    .await;
    check_write(
        &svc,
        "removed member",
        m,
        Method::PATCH,
        &format!("/api/v1/metadata/{}", w.md_of(&w.s_proj)),
        Some(json!({"name": "after removal"})),
        Want::LikeMissing(w.md_of(&w.s_proj), 404),
    )
    .await;
}

// ---------------------------------------------------------------------------------------------
// Repeated authentication failures

#[tokio::test]
async fn repeated_failures_never_lock_out_a_valid_key() {
    // auth.rs: an unknown key counts against (address, key fingerprint) and against the
    // address; past `auth_failure_limit` of either, unknown keys from there answer 429. A valid
    // key is looked up first and always works, so one stale script on a shared address (the
    // app and the CLI on loopback, a lab behind one proxy) locks out nobody.
    let svc = Service::start_with(|c| {
        c.auth_failure_limit = 3;
    })
    .await;
    let u = svc.user("valid@lab.test").await;
    let stale = TestUser { key: "0".repeat(32), ..u.clone() };
    let mut statuses = Vec::new();
    let mut blocked = None;
    for i in 0..10 {
        let r = send(&svc, Some(&stale), Method::GET, "/api/v1/samples", None).await;
        statuses.push(r.status);
        if r.status == 429 {
            blocked = Some(r);
            break;
        }
        assert_401(&r, &format!("stale key, attempt {}", i + 1));
    }
    assert_eq!(statuses, vec![401, 401, 401, 429], "three failures are allowed, the fourth attempt is refused");
    let r = blocked.unwrap();
    assert_error(r.status, &r.json(), 429);
    let retry: u64 = r.headers.get(RETRY_AFTER).expect("429 carries Retry-After").to_str().unwrap().parse().unwrap();
    assert!((1..=300).contains(&retry), "Retry-After {retry} must be a positive number of seconds within the window");

    // The same address, a valid key, in every form: never refused.
    for _ in 0..5 {
        let r = send(&svc, Some(&u), Method::GET, "/api/v1/samples", None).await;
        assert_eq!(r.status, 200, "a valid key from an address with failures: {}", r.text());
    }
    let r = svc.req(Method::GET, "/api/v1/account").header("X-API-Key", &u.key).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = svc.req(Method::GET, "/api/v1/account").bearer_auth(&u.key).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // Requests without credentials still get public data.
    let (s, b) = svc.get(None, "/api/v1/samples").await;
    assert_eq!((s, b), (200, json!([])));
    // Guessing: each new unknown key from the address is refused too once the address is over.
    let guess = TestUser { key: format!("{:032x}", 7), ..u.clone() };
    assert_eq!(send(&svc, Some(&guess), Method::GET, "/api/v1/account", None).await.status, 429);

    // Many different keys from one address: the address's own count stops them.
    let svc = Service::start_with(|c| {
        c.auth_failure_limit = 3;
    })
    .await;
    let u = svc.user("valid@lab.test").await;
    let statuses: Vec<u16> = futures_statuses(&svc, &u, (0..5).map(|i| format!("{i:032x}"))).await;
    assert_eq!(statuses, vec![401, 401, 401, 429, 429], "different guesses count against the address");
    assert_eq!(send(&svc, Some(&u), Method::GET, "/api/v1/account", None).await.status, 200);

    // Once the window ends, an unknown key is answered 401 again.
    let svc = Service::start_with(|c| {
        c.auth_failure_limit = 2;
        c.auth_failure_window = Duration::from_secs(2);
    })
    .await;
    let u = svc.user("valid@lab.test").await;
    let bad = TestUser { key: "0".repeat(32), ..u.clone() };
    let window_start = std::time::Instant::now();
    for _ in 0..2 {
        assert_401(&send(&svc, Some(&bad), Method::GET, "/api/v1/account", None).await, "bad key");
    }
    let r = send(&svc, Some(&bad), Method::GET, "/api/v1/account", None).await;
    assert_eq!(r.status, 429, "{}", r.text());
    let retry: u64 = r.headers.get(RETRY_AFTER).unwrap().to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&retry), "Retry-After {retry} for a 2-second window");
    assert_eq!(send(&svc, Some(&u), Method::GET, "/api/v1/account", None).await.status, 200);
    tokio::time::sleep(
        (window_start + Duration::from_millis(2100)).saturating_duration_since(std::time::Instant::now()),
    )
    .await;
    assert_401(&send(&svc, Some(&bad), Method::GET, "/api/v1/account", None).await, "after the window");
}

/// Statuses of `GET /account` with each of `keys`, one after another.
async fn futures_statuses(svc: &Service, u: &TestUser, keys: impl Iterator<Item = String>) -> Vec<u16> {
    let mut out = Vec::new();
    for key in keys {
        let who = TestUser { key, ..u.clone() };
        out.push(send(svc, Some(&who), Method::GET, "/api/v1/account", None).await.status);
    }
    out
}

#[tokio::test]
async fn forwarded_addresses_count_only_from_trusted_proxies() {
    // Behind a configured proxy, each client address is counted on its own; without the
    // setting, X-Forwarded-For is ignored (anyone could write it).
    let with_proxy = Service::start_with(|c| {
        c.auth_failure_limit = 2;
        c.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await;
    let without = Service::start_with(|c| {
        c.auth_failure_limit = 2;
    })
    .await;
    for svc in [&with_proxy, &without] {
        let u = svc.user("valid@lab.test").await;
        let from = |ip: &str, key: &str| {
            svc.req(Method::GET, "/api/v1/account")
                .basic_auth(key, Some(""))
                .header("X-Forwarded-For", format!("203.0.113.9, {ip}"))
        };
        let bad = "f".repeat(32);
        for _ in 0..3 {
            from("192.0.2.1", &bad).send().await.unwrap();
        }
        assert_eq!(from("192.0.2.1", &bad).send().await.unwrap().status().as_u16(), 429);
        let other_client = from("192.0.2.2", &bad).send().await.unwrap().status().as_u16();
        let trusted = std::ptr::eq(svc, &with_proxy);
        assert_eq!(other_client, if trusted { 401 } else { 429 }, "trusted proxy: {trusted}");
        assert_eq!(from("192.0.2.1", &u.key).send().await.unwrap().status().as_u16(), 200);
    }
}

/// Keys are 32 characters, as the real service's; a 48-character key made by an earlier version
/// keeps working (until it is rotated), and a bearer token is taken as the key.
#[tokio::test]
async fn keys_are_32_characters_older_48_character_keys_still_work_and_bearer_tokens_are_keys() {
    let svc = Service::start().await;
    let u = svc.user("lab@example.org").await;
    assert_eq!(u.key.len(), 32);
    assert!(u.key.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    let old_key = "0123456789abcdef".repeat(3);
    sqlx::query("UPDATE users SET key_hash = $1 WHERE id = $2")
        .bind(mgds_server::auth::hash_key(&old_key))
        .bind(&u.id)
        .execute(&svc.state.db)
        .await
        .unwrap();
    let old = TestUser { key: old_key, ..u.clone() };
    let r = send(&svc, Some(&old), Method::GET, "/api/v1/account", None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let r = svc
        .req(Method::GET, "/api/v1/account")
        .header("Authorization", format!("Bearer {}", old.key))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
}

// ---------------------------------------------------------------------------------------------
// E-mail addresses and accounts are not learned from ids

#[tokio::test]
async fn an_id_reveals_no_e_mail_address_and_no_account() {
    let svc = Service::start_with(|c| c.auth_failure_limit = 3).await;
    let alice = svc.user("alice@alpha.test").await;
    let bob = svc.user_in("bob@beta.test", Some("beta"), Role::Member).await;
    let carol = svc.user_in("carol@gamma.test", Some("gamma"), Role::Member).await;
    let project = create_project(&svc, &alice, "alice-p", false).await;
    let doc = svc.upload_document(&alice, "notes.txt", b"notes").await;

    // Adding an id one may not see answers exactly as adding an id nobody has.
    let missing = "0123456789abcdef";
    for path in [format!("/api/v1/projects/{project}/add_user"), format!("/api/v1/documents/{doc}/add_user")] {
        let hidden = send(&svc, Some(&alice), Method::POST, &path, Some(&json!({"user": uref(&bob.id)}))).await;
        let nobody = send(&svc, Some(&alice), Method::POST, &path, Some(&json!({"user": uref(missing)}))).await;
        assert_eq!(hidden.status, 400, "{}", hidden.text());
        assert_eq!(hidden.text().replace(&bob.id, "ID"), nobody.text().replace(missing, "ID"), "{path}");
    }
    // ... and the e-mail address stays hidden: the user answers like a missing one.
    let seen = send(&svc, Some(&alice), Method::GET, &format!("/api/v1/users/{}", bob.id), None).await;
    let nobody = send(&svc, Some(&alice), Method::GET, &format!("/api/v1/users/{missing}"), None).await;
    assert_eq!((seen.status, seen.body.clone()), (404, nobody.body.clone()));
    // Patterns find nobody outside what the caller sees already.
    let (s, found) =
        svc.get(Some(&alice), "/api/v1/users?where=%7B%22email%22%3A%7B%22%24contains%22%3A%22%40%22%7D%7D").await;
    assert_eq!((s, found.as_array().map(Vec::len)), (200, Some(1)), "{found}");

    // The exact address finds Bob, and then Alice may add him.
    assert_eq!(svc.find_user(&alice, "bob@beta.test").await, bob.id);
    let (s, b) =
        svc.post(Some(&alice), &format!("/api/v1/projects/{project}/add_user"), json!({"user": uref(&bob.id)})).await;
    assert_eq!(s, 200, "{b}");
    // Adding Bob lets Bob see Alice...
    let (s, a) = svc.get(Some(&bob), &format!("/api/v1/users/{}", alice.id)).await;
    assert_eq!((s, a["email"].clone()), (200, json!("alice@alpha.test")));
    // ... and Carol, once invited too, sees Bob (both joined at Alice's invitation).
    svc.find_user(&alice, "carol@gamma.test").await;
    let (s, _) =
        svc.post(Some(&alice), &format!("/api/v1/projects/{project}/add_user"), json!({"user": uref(&carol.id)})).await;
    assert_eq!(s, 200);
    let (s, b) = svc.get(Some(&carol), &format!("/api/v1/users/{}", bob.id)).await;
    assert_eq!((s, b["email"].clone()), (200, json!("bob@beta.test")));
    // Bob adding Carol's id to his own project teaches him nothing new, and Carol nothing of a stranger.
    let dave = svc.user_in("dave@delta.test", Some("delta"), Role::Member).await;
    let bobs = create_project(&svc, &bob, "bob-p", false).await;
    let r = send(
        &svc,
        Some(&bob),
        Method::POST,
        &format!("/api/v1/projects/{bobs}/add_user"),
        Some(&json!({"user": uref(&dave.id)})),
    )
    .await;
    assert_eq!(r.status, 400);
    let r = send(&svc, Some(&bob), Method::GET, &format!("/api/v1/users/{}", dave.id), None).await;
    assert_eq!(r.status, 404);

    // Lookups that find nobody are limited like failed sign-ins (3 per window here).
    let mut statuses = Vec::new();
    for i in 0..5 {
        let filter = format!("%7B%22email%22%3A%22nobody{i}%40lab.test%22%7D");
        statuses.push(svc.get(Some(&dave), &format!("/api/v1/users?where={filter}")).await.0);
    }
    assert_eq!(statuses, vec![200, 200, 200, 429, 429]);
    // Even an address that exists is not confirmed while the limit holds.
    let r =
        send(&svc, Some(&dave), Method::GET, "/api/v1/users?where=%7B%22email%22%3A%22alice%40alpha.test%22%7D", None)
            .await;
    assert_eq!(r.status, 429, "{}", r.text());
    // Others are not affected.
    assert_eq!(svc.find_user(&carol, "alice@alpha.test").await, alice.id);
}

// ---------------------------------------------------------------------------------------------
// The routes no table above reaches

#[tokio::test]
async fn multipart_uploads_organisation_lists_and_the_schema_keep_to_the_caller() {
    let svc = Service::start().await;
    let w = World::build(&svc).await;
    // Upload callbacks: someone else's upload answers exactly like one that does not exist.
    for (collection, body) in
        [("samples", json!({"filename": "r.fastq.gz", "size": 10})), ("documents", json!({"filename": "report.pdf"}))]
    {
        let (s, init) =
            svc.post(Some(&w.owner), &format!("/api/v1/{collection}/init_multipart_upload"), body.clone()).await;
        assert_eq!(s, 200, "{init}");
        let callback = init["callback_url"].as_str().unwrap().to_string();
        let upload_id = callback.rsplit('/').next().unwrap().to_string();
        let cb = json!({"s3_path": format!("s3://mgds-uploads/{}", init["file_id"].as_str().unwrap())});
        let theirs = send(&svc, Some(&w.other), Method::POST, &callback, Some(&cb)).await;
        let missing_path = callback.replace(&upload_id, "0123456789abcdef");
        let nobody = send(&svc, Some(&w.other), Method::POST, &missing_path, Some(&cb)).await;
        assert_eq!(theirs.status, 404, "{}", theirs.text());
        assert_eq!(theirs.text().replace(&upload_id, "ID"), nobody.text().replace("0123456789abcdef", "ID"));
        // Members of the owner's project and organisation fare no better.
        for who in [&w.member, &w.orgmate] {
            assert_eq!(send(&svc, Some(who), Method::POST, &callback, Some(&cb)).await.status, 404);
        }
        assert_401(&send(&svc, None, Method::POST, &callback, Some(&cb)).await, "anonymous callback");
        assert_401(
            &send(&svc, None, Method::POST, &format!("/api/v1/{collection}/init_multipart_upload"), Some(&body)).await,
            "anonymous init_multipart_upload",
        );
    }
    // The organisation's samples: only samples the caller may see, of people of their organisation.
    for (who, user) in [("owner", &w.owner), ("orgmate", &w.orgmate), ("member", &w.member), ("other", &w.other)] {
        let (s, org) = svc.get(Some(user), "/api/v1/samples/organization?per_page=1000").await;
        assert_eq!(s, 200, "{who}: {org}");
        let (_, seen) = svc.get(Some(user), "/api/v1/samples?per_page=1000").await;
        let seen: BTreeSet<&str> = seen.as_array().unwrap().iter().map(|x| x["$uri"].as_str().unwrap()).collect();
        for x in org.as_array().unwrap() {
            assert!(seen.contains(x["$uri"].as_str().unwrap()), "{who} sees {x} in the organisation list only");
        }
        if who == "member" || who == "other" {
            assert_eq!(org, json!([]), "{who} is alone in their organisation");
        }
    }
    assert_401(&send(&svc, None, Method::GET, "/api/v1/samples/organization", None).await, "anonymous");
    // The schema is public.
    let (s, schema) = svc.get(None, "/api/v1/schema").await;
    assert_eq!(s, 200);
    assert!(schema.is_object());
}
