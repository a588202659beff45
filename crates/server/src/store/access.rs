//! Who may see what: one SQL predicate per kind of record, used in the very query that fetches
//! or lists it, so "does not exist" and "not yours" take the same path and answer the same way.
//!
//! The rules (spec "Visibility rules", with the choices this service makes where it is silent):
//! - a sample is seen by its owner; by anyone if `public`; by the owner's organisation if
//!   `shared`, and by its admins and owners whatever its visibility (but `importing`); by the members of its project (with `can_see_files`) and the project's owner if
//!   `shared`, `private` or `awaiting data` (a pre-uploaded sample is private unless placed in a
//!   project); `importing` samples by the owner only;
//! - analyses and metadata are seen with their sample; tags by their creator and with any sample
//!   that carries them;
//! - a project is seen if public, by its owner, by its members, and by its organisation's admins
//!   and owners;
//! - a job is seen if public and published, by its creator, and by whoever sees an analysis made
//!   with it;
//! - a document by its uploader, its downloaders, and its uploader's organisation's admins and
//!   owners;
//! - a user by themselves, their organisation, the people who shared a project or document with
//!   them (and the project's other members), and the people they looked up by exact e-mail
//!   address (see [`user`]); a sequencing batch by its owner's organisation.

use super::caller::Caller;
use super::records::{Part, Parts};
use crate::listing::{Bind, Compiled};

fn c(sql: String, binds: Vec<Bind>) -> Compiled {
    Compiled { sql, binds }
}

fn t(s: &str) -> Bind {
    Bind::Text(s.to_string())
}

/// Projects whose samples `?` (a user id, bound twice) may see: owned, or joined with
/// `can_see_files`.
const SEEING_PROJECTS: &str = "(SELECT p.id FROM projects p WHERE p.owner_id = ? \
     UNION SELECT pm.project_id FROM project_members pm WHERE pm.user_id = ? \
     AND pm.permissions LIKE '%\"can_see_files\"%')";

/// The sample aliased `a` is visible to the caller: in any of the parts of [`sample_parts`],
/// so that the rule is written once.
pub fn sample(caller: &Caller, a: &str) -> Compiled {
    any_of(parts_of(caller, a, ("sample_counts", "n"), &[]).parts.into_iter().map(|p| p.cond))
}

/// Conditions joined by `OR`, their values in order.
fn any_of(conds: impl IntoIterator<Item = Compiled>) -> Compiled {
    let (mut sql, mut binds) = (Vec::new(), Vec::new());
    for cond in conds {
        sql.push(format!("({})", cond.sql));
        binds.extend(cond.binds);
    }
    c(format!("({})", sql.join(" OR ")), binds)
}

/// The samples the caller may see, as disjoint parts that indexes read in order (see
/// [`Parts`]): the caller's own; others' public ones; others' shared ones in the caller's
/// organisation; the rest of the projects the caller sees into. The first three are also
/// conditions on the counts of samples per owner and visibility (`sample_counts`). The last
/// part is read from the projects' side: its visibility is written `(s.visibility || '')` so
/// that no planner reads it from the index of visibilities (every private sample of the
/// install) instead of the projects' samples.
pub fn sample_parts(caller: &Caller) -> Parts {
    parts_of(caller, "s", ("sample_counts", "n"), &["visibility", "owner"])
}

/// The metadata records the caller may see (those of the samples they may see), as parts read
/// as [`sample_parts`] are, from the sample's owner, visibility and project that each record
/// carries. A sample has exactly one metadata record, so the counts of samples count them.
pub fn metadata_parts(caller: &Caller) -> Parts {
    parts_of(caller, "m", ("sample_counts", "n"), &[])
}

/// The analyses the caller may see (those of the samples they may see), as parts read as
/// [`sample_parts`] are, from the sample's owner, visibility and project that each analysis
/// carries; counted per owner, visibility and kind (`analysis_counts`).
pub fn analysis_parts(caller: &Caller) -> Parts {
    parts_of(caller, "a", ("analysis_counts", "n"), &["analysis_type"])
}

/// The parts of what the caller may see of records aliased `a` that carry their sample's
/// `owner_id`, `visibility` and `project_id`.
fn parts_of(
    caller: &Caller,
    a: &str,
    counts: (&'static str, &'static str),
    countable: &'static [&'static str],
) -> Parts {
    let part = |sql: String, binds: Vec<Bind>, counted: bool| Part {
        counted: counted.then(|| c(sql.clone(), binds.clone())),
        cond: c(sql, binds),
    };
    let parts = match &caller.0 {
        None => vec![part(format!("{a}.visibility = 'public'"), vec![], true)],
        Some(u) => {
            let in_org = format!("{a}.owner_id IN (SELECT ou.id FROM users ou WHERE ou.organization_id = ?)");
            // What the caller sees of the organisation's other samples: the shared ones, or for
            // an admin every one but those still importing.
            let of_org = if u.manages_org() {
                format!("{a}.visibility IN ('shared', 'private', 'awaiting data')")
            } else {
                format!("{a}.visibility = 'shared'")
            };
            vec![
                part(format!("{a}.owner_id = ?"), vec![t(&u.id)], true),
                part(format!("{a}.visibility = 'public' AND {a}.owner_id <> ?"), vec![t(&u.id)], true),
                part(
                    format!("{of_org} AND {a}.owner_id <> ? AND {in_org}"),
                    vec![t(&u.id), t(&u.organization_id)],
                    true,
                ),
                part(
                    format!(
                        "({a}.visibility || '') IN ('shared', 'private', 'awaiting data') AND {a}.owner_id <> ? \
                         AND {a}.project_id IN {SEEING_PROJECTS} AND NOT ({of_org} AND {in_org})"
                    ),
                    vec![t(&u.id), t(&u.id), t(&u.id), t(&u.organization_id)],
                    false,
                ),
            ]
        }
    };
    Parts { parts, counts: Some(counts), countable }
}

/// A record aliased `a` whose `sample_column` names a sample visible to the caller.
pub fn via_sample(caller: &Caller, a: &str, sample_column: &str) -> Compiled {
    let inner = sample(caller, "vs");
    c(format!("EXISTS (SELECT 1 FROM samples vs WHERE vs.id = {a}.{sample_column} AND {})", inner.sql), inner.binds)
}

/// The project aliased `a` is visible to the caller.
pub fn project(caller: &Caller, a: &str) -> Compiled {
    match &caller.0 {
        None => c(format!("{a}.public = 1"), vec![]),
        Some(u) if u.manages_org() => c(
            format!(
                "({a}.public = 1 OR {a}.owner_id = ? \
                 OR {a}.id IN (SELECT pm.project_id FROM project_members pm WHERE pm.user_id = ?) \
                 OR {a}.organization_id = ?)"
            ),
            vec![t(&u.id), t(&u.id), t(&u.organization_id)],
        ),
        Some(u) => c(
            format!(
                "({a}.public = 1 OR {a}.owner_id = ? \
                 OR {a}.id IN (SELECT pm.project_id FROM project_members pm WHERE pm.user_id = ?))"
            ),
            vec![t(&u.id), t(&u.id)],
        ),
    }
}

/// The job aliased `a` is visible to the caller.
pub fn job(caller: &Caller, a: &str) -> Compiled {
    let used = via_sample(caller, "ja", "sample_id");
    match &caller.0 {
        None => c(format!("({a}.public = 1 AND {a}.draft = 0)"), vec![]),
        Some(u) => {
            let mut binds = vec![t(&u.id)];
            binds.extend(used.binds);
            c(
                format!(
                    "(({a}.public = 1 AND {a}.draft = 0) OR {a}.creator_id = ? \
                     OR EXISTS (SELECT 1 FROM analyses ja WHERE ja.job_id = {a}.id AND {}))",
                    used.sql
                ),
                binds,
            )
        }
    }
}

/// The document aliased `a` is visible to the caller (anonymous callers see none).
pub fn document(caller: &Caller, a: &str) -> Compiled {
    any_of(document_parts_of(caller, a).parts.into_iter().map(|p| p.cond))
}

/// The documents the caller may see, as disjoint parts that indexes read (see [`Parts`]): their
/// own; those shared with them; and for an organisation's admin, the rest of the
/// organisation's. Counted part by part: a caller sees few enough documents for that.
pub fn document_parts(caller: &Caller) -> Parts {
    document_parts_of(caller, "d")
}

fn document_parts_of(caller: &Caller, a: &str) -> Parts {
    let part = |sql: String, binds: Vec<Bind>| Part { cond: c(sql, binds), counted: None };
    let parts = match &caller.0 {
        None => vec![part("0 = 1".into(), vec![])],
        Some(u) => {
            let shared = "SELECT dd.document_id FROM document_downloaders dd WHERE dd.user_id = ?";
            let mut parts = vec![
                part(format!("{a}.uploader_id = ?"), vec![t(&u.id)]),
                part(format!("{a}.uploader_id <> ? AND {a}.id IN ({shared})"), vec![t(&u.id), t(&u.id)]),
            ];
            if u.manages_org() {
                parts.push(part(
                    format!(
                        "{a}.uploader_id <> ? AND {a}.uploader_id IN (SELECT ou.id FROM users ou WHERE ou.organization_id = ?) \
                         AND {a}.id NOT IN ({shared})"
                    ),
                    vec![t(&u.id), t(&u.organization_id), t(&u.id)],
                ));
            }
            parts
        }
    };
    Parts { parts, counts: None, countable: &[] }
}

/// The tag aliased `a` is visible to the caller: their own, and those on a sample they see.
/// Each link of a tag carries its sample's owner, visibility and project, so each part of
/// [`sample_parts`] is one lookup of the tag's links by index. `LIMIT 1 OFFSET 0` keeps each
/// lookup per tag: without it PostgreSQL may read every public link of the install into a hash
/// instead.
pub fn tag(caller: &Caller, a: &str) -> Compiled {
    let own = caller.0.as_ref().map(|u| c(format!("{a}.owner_id = ?"), vec![t(&u.id)]));
    let on_seen = parts_of(caller, "st", ("sample_counts", "n"), &[]).parts.into_iter().map(|p| {
        c(
            format!(
                "EXISTS (SELECT 1 FROM sample_tags st WHERE st.tag_id = {a}.id AND {} LIMIT 1 OFFSET 0)",
                p.cond.sql
            ),
            p.cond.binds,
        )
    });
    any_of(own.into_iter().chain(on_seen))
}

/// The user aliased `a` is visible to the caller (their e-mail address with them). Sight of a
/// person is given by that person, or by the one who put both in one place, never taken by
/// naming an id: a user sees
/// - themselves, and the people of their organisation (the administrator put them there);
/// - the owner of a project they are a member of, and its other members (the owner invited
///   them all);
/// - the uploader of a document shared with them;
/// - the people they looked up by exact e-mail address (they knew the address already).
///
/// Adding someone to one's project or document lets *them* see *you*; it does not let you see
/// them (else any id would give away its e-mail address).
pub fn user(caller: &Caller, a: &str) -> Compiled {
    match &caller.0 {
        None => c("0 = 1".into(), vec![]),
        Some(u) => c(
            format!(
                "({a}.id = ? OR {a}.organization_id = ? \
                 OR {a}.id IN (SELECT p.owner_id FROM projects p JOIN project_members pm ON pm.project_id = p.id WHERE pm.user_id = ?) \
                 OR {a}.id IN (SELECT pm2.user_id FROM project_members pm2 JOIN project_members pm ON pm.project_id = pm2.project_id WHERE pm.user_id = ?) \
                 OR {a}.id IN (SELECT d.uploader_id FROM documents d JOIN document_downloaders dd ON dd.document_id = d.id WHERE dd.user_id = ?) \
                 OR {a}.id IN (SELECT uc.contact_id FROM user_contacts uc WHERE uc.user_id = ?))"
            ),
            vec![t(&u.id), t(&u.organization_id), t(&u.id), t(&u.id), t(&u.id), t(&u.id)],
        ),
    }
}

/// The sequencing batch aliased `a` is visible to the caller.
pub fn batch(caller: &Caller, a: &str) -> Compiled {
    match &caller.0 {
        None => c("0 = 1".into(), vec![]),
        Some(u) => c(
            format!("({a}.owner_id = ? OR {a}.owner_id IN (SELECT ou.id FROM users ou WHERE ou.organization_id = ?))"),
            vec![t(&u.id), t(&u.organization_id)],
        ),
    }
}

/// Whether the stored object `key` still belongs to a record that the user `holder` (`None`:
/// anonymous) may see: a sample's reads, a document, or an analysis's output. A signed download
/// address carries its holder and is checked with this when used, so it stops working once the
/// record is deleted or hidden from its holder (made private, the holder removed from the
/// project), not only when it expires.
///
/// A holder names the user and the key epoch the address was made in (`<id>.<epoch>`;
/// addresses made before epochs were named give the id alone, epoch 0): once the user's key is
/// rotated, the address stops working too.
pub async fn key_visible(
    db: &crate::store::db::Pool,
    holder: Option<&str>,
    key: &str,
) -> crate::error::ApiResult<bool> {
    let caller = match holder {
        None => Caller(None),
        Some(holder) => {
            let (id, epoch) = match holder.split_once('.') {
                Some((id, epoch)) => (id, epoch.parse::<i64>().ok()),
                None => (holder, Some(0)),
            };
            match super::caller::by_id(db, id).await? {
                Some(u) if Some(u.key_epoch) == epoch => Caller(Some(u)),
                _ => return Ok(false),
            }
        }
    };
    let s = sample(&caller, "s");
    let d = document(&caller, "d");
    let a = via_sample(&caller, "a", "sample_id");
    let sql = format!(
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM samples s WHERE s.object_key = ? AND {}) \
         OR EXISTS (SELECT 1 FROM documents d WHERE d.object_key = ? AND {}) \
         OR EXISTS (SELECT 1 FROM analyses a WHERE (a.results_key = ? OR a.readlevel_key = ?) AND {}) \
         THEN 1 ELSE 0 END",
        s.sql, d.sql, a.sql
    );
    let mut binds = vec![t(key)];
    binds.extend(s.binds);
    binds.push(t(key));
    binds.extend(d.binds);
    binds.extend([t(key), t(key)]);
    binds.extend(a.binds);
    // Only the access predicates are spliced in; every value is bound.
    let seen: i64 = sqlx::query_scalar_with(super::db::numbered(sql), super::db::args(&binds)?).fetch_one(db).await?;
    Ok(seen != 0)
}
