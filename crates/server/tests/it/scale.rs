//! The service at scale, on whichever database the suite runs: every list of samples, metadata,
//! analyses and documents reads indexes in the page's order, never the whole table, over
//! 200,000 samples (and 100,000 analyses, 20,000 documents) after the planner's statistics are
//! taken, and the lists of tags and projects read no table of samples or links in full; a write
//! of one user does not wait for another's.

use std::time::Duration;

use mgds_server::db::{self, Backend, Bind, Scope};
use mgds_server::store::analyses::{self, AnalysisKind};
use mgds_server::store::caller::{self, Caller};
use mgds_server::store::records::ListQuery;
use mgds_server::store::{documents, metadata, projects, samples, tags};
use serde_json::json;

use super::*;

/// `n` samples made in the database directly (the API would take minutes), spread over
/// `owners`, a tenth public, every seventh in one of its owner's ten projects, every third
/// tagged with one of its owner's ten tags; `n / 10` documents, every tenth shared with the
/// next owner.
async fn fill(pool: &db::Pool, owners: &[String], org: &str, n: u64) {
    let postgres = Backend::of(pool) == Backend::Postgres;
    let hex = |e: &str| if postgres { format!("lpad(to_hex({e}), 16, '0')") } else { format!("printf('%016x', {e})") };
    let series = |a: u64, b: u64| {
        if postgres {
            format!("SELECT i FROM generate_series({a}::bigint, {b}::bigint) AS g(i)")
        } else {
            format!("WITH RECURSIVE g(i) AS (SELECT {a} UNION ALL SELECT i + 1 FROM g WHERE i < {b}) SELECT i FROM g")
        }
    };
    let u = owners.len() as u64;
    let owner = |of: &str| {
        let cases: Vec<String> = owners.iter().enumerate().map(|(k, o)| format!("WHEN {k} THEN '{o}'")).collect();
        format!("CASE {of} % {u} {} END", cases.join(" "))
    };
    let micros = if postgres { "lpad((i % 1000000)::text, 6, '0')" } else { "printf('%06d', i % 1000000)" };
    let mut tx = pool.begin().await.unwrap();
    for sql in [
        format!(
            "INSERT INTO projects (id, owner_id, organization_id, project_name, name, public, created_at) \
             SELECT {}, {}, '{org}', 'p' || i, 'Project ' || i, 0, '2026-01-01T00:00:00.000000+00:00' FROM ({}) AS s",
            hex(&format!("{} + i", 1u64 << 41)),
            owner("(i / 10)"),
            series(0, u * 10 - 1)
        ),
        format!(
            "INSERT INTO tags (id, owner_id, name, created_at) \
             SELECT {}, {}, 'tag' || (i % 10), '2026-01-01T00:00:00.000000+00:00' FROM ({}) AS s",
            hex(&format!("{} + i", 1u64 << 42)),
            owner("(i / 10)"),
            series(0, u * 10 - 1)
        ),
        format!(
            "INSERT INTO samples (id, owner_id, visibility, filename, size, object_key, project_id, created_at, updated_at) \
             SELECT {id}, {own}, CASE WHEN i % 10 = 0 THEN 'public' ELSE 'private' END, \
             'run' || (i % 997) || '_S' || (i % 96) || '.fastq.gz', 1000 + (i * 7919) % 5000000, \
             'samples/' || {id} || '/reads.fastq.gz', CASE WHEN i % 7 = 0 THEN {project} END, \
             '2026-01-01T00:00:00.' || {micros} || '+00:00', '2026-01-01T00:00:00.000000+00:00' FROM ({s}) AS s",
            id = hex("i"),
            own = owner("i"),
            project = hex(&format!("{} + (i % {u}) * 10 + (i / {u}) % 10", 1u64 << 41)),
            s = series(0, n - 1),
        ),
        format!(
            "INSERT INTO metadata (id, sample_id, owner_id) SELECT {}, {}, {} FROM ({}) AS s",
            hex(&format!("i + {}", 1u64 << 40)),
            hex("i"),
            owner("i"),
            series(0, n - 1)
        ),
        "INSERT INTO jobs (id, name, analysis_type, created_at) \
         VALUES ('00000000000000aa', 'Scale', 'classification', '2026-01-01T00:00:00.000000+00:00')"
            .to_string(),
        format!(
            "INSERT INTO analyses (id, sample_id, job_id, analysis_type, complete, success, created_at, updated_at) \
             SELECT {}, {}, '00000000000000aa', CASE WHEN i % 4 = 0 THEN 'panel' ELSE 'classification' END, 1, 1, \
             '2026-01-01T00:00:01.' || {micros} || '+00:00', '2026-01-01T00:00:01.000000+00:00' FROM ({}) AS s WHERE i % 2 = 0",
            hex(&format!("i + {}", 1u64 << 43)),
            hex("i"),
            series(0, n - 1)
        ),
        format!(
            "INSERT INTO documents (id, uploader_id, filename, size, object_key, created_at) \
             SELECT {id}, {own}, 'report' || i || '.pdf', 1000, 'documents/' || {id}, \
             '2026-01-01T00:00:02.' || {micros} || '+00:00' FROM ({s}) AS s",
            id = hex(&format!("i + {}", 1u64 << 44)),
            own = owner("i"),
            s = series(0, n / 10 - 1),
        ),
        format!(
            "INSERT INTO document_downloaders (document_id, user_id) SELECT {}, {} FROM ({}) AS s WHERE i % 10 = 0",
            hex(&format!("i + {}", 1u64 << 44)),
            owner("(i + 1)"),
            series(0, n / 10 - 1)
        ),
        format!(
            "INSERT INTO sample_tags (sample_id, tag_id) SELECT {}, {} FROM ({}) AS s WHERE i % 3 = 0",
            hex("i"),
            hex(&format!("{} + (i % {u}) * 10 + (i / {u}) % 10", 1u64 << 42)),
            series(0, n - 1)
        ),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.unwrap();
    }
    tx.commit().await.unwrap();
    let analyze = if postgres { "VACUUM ANALYZE" } else { "ANALYZE" };
    sqlx::query(analyze).execute(pool).await.unwrap();
}

/// The plan of `sql` with `binds`, one line a step.
async fn plan(pool: &db::Pool, sql: &str, binds: &[Bind]) -> Vec<String> {
    use sqlx::Row;
    let postgres = Backend::of(pool) == Backend::Postgres;
    let explain = if postgres { format!("EXPLAIN {sql}") } else { format!("EXPLAIN QUERY PLAN {sql}") };
    let rows = sqlx::query_with(sqlx::AssertSqlSafe(explain), db::args(binds).unwrap()).fetch_all(pool).await.unwrap();
    rows.iter().map(|r| if postgres { r.get::<String, _>(0) } else { r.get::<String, _>(3) }).collect()
}

#[tokio::test]
async fn every_list_reads_indexes_not_the_table() {
    let svc = Service::start().await;
    let mut users = Vec::new();
    for i in 0..20 {
        users.push(svc.user(&format!("user{i}@lab.example.org")).await);
    }
    let ids: Vec<String> = users.iter().map(|u| u.id.clone()).collect();
    let org: String = sqlx::query_scalar("SELECT organization_id FROM users WHERE id = $1")
        .bind(&ids[0])
        .fetch_one(&svc.state.db)
        .await
        .unwrap();
    let n = 200_000;
    fill(&svc.state.db, &ids, &org, n).await;
    // The counts kept as data follow statements that change many rows at once.
    let pool = &svc.state.db;
    for sql in [
        "UPDATE samples SET visibility = 'shared' WHERE id LIKE '%1' AND visibility = 'private'",
        "UPDATE samples SET size = size + 1 WHERE id LIKE '%2'",
        "DELETE FROM samples WHERE id LIKE '%ff3'",
        "UPDATE samples SET visibility = 'private' WHERE id LIKE '%11'",
    ] {
        sqlx::query(sql).execute(pool).await.unwrap();
    }
    let kept: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT owner_id, visibility, n FROM sample_counts WHERE n <> 0 ORDER BY owner_id, visibility")
            .fetch_all(pool)
            .await
            .unwrap();
    let counted: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT owner_id, visibility, COUNT(*) FROM samples GROUP BY owner_id, visibility ORDER BY owner_id, visibility",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(kept, counted);
    let kept: Vec<(String, String, String, i64)> = sqlx::query_as(
        "SELECT owner_id, visibility, analysis_type, n FROM analysis_counts WHERE n <> 0 \
         ORDER BY owner_id, visibility, analysis_type",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    let counted: Vec<(String, String, String, i64)> = sqlx::query_as(
        "SELECT s.owner_id, s.visibility, a.analysis_type, COUNT(*) FROM analyses a JOIN samples s ON s.id = a.sample_id \
         GROUP BY s.owner_id, s.visibility, a.analysis_type ORDER BY s.owner_id, s.visibility, a.analysis_type",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(kept, counted, "the counts of analyses follow their samples");
    let astray: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM metadata m JOIN samples s ON s.id = m.sample_id \
         WHERE m.visibility <> s.visibility OR m.project_id IS DISTINCT FROM s.project_id",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(astray, 0, "metadata records carry their sample's visibility and project");
    let me = Caller(caller::by_id(&svc.state.db, &ids[0]).await.unwrap());
    let tag = format!("{:016x}", 1u64 << 42);
    let project = format!("{:016x}", 1u64 << 41);
    let filters = [
        None,
        Some(json!({"visibility": "private"})),
        Some(json!({"visibility": {"$in": ["public", "shared"]}})),
        Some(json!({"tags": tag})),
        Some(json!({"tags": {"$containsall": [tag, format!("{:016x}", (1u64 << 42) + 1)]}})),
        Some(json!({"project": project})),
        Some(json!({"created_at": {"$gte": "2026-01-01T00:00:00.9"}})),
        Some(json!({"created_at": {"$between": ["2026-01-01T00:00:00.1", "2026-01-01T00:00:00.2"]}})),
    ];
    let sorts =
        [None, Some(json!({"size": true})), Some(json!({"filename": false})), Some(json!({"created_at": true}))];
    // Every statement of every list shape: the first page, one past the middle (read from the
    // end) and the last.
    let mut statements = Vec::new();
    let pages = [("1", 30_000), ("400", 30_000), ("599", 30_000)];
    for filter in &filters {
        for sort in &sorts {
            let (f, s) = (filter.as_ref().map(|v| v.to_string()), sort.as_ref().map(|v| v.to_string()));
            for (page, total) in pages {
                let q = ListQuery { filter: f.as_deref(), sort: s.as_deref(), page: Some(page), per_page: Some("50") };
                for st in samples::list_statements(&me, &q, total).unwrap() {
                    statements.push((format!("samples where {f:?} sort {s:?} page {page}"), st));
                }
            }
        }
    }
    let platform = json!({"platform": "Illumina MiSeq"}).to_string();
    for (page, total) in pages {
        for f in [None, Some(platform.as_str())] {
            let q = ListQuery { filter: f, sort: None, page: Some(page), per_page: Some("50") };
            for st in metadata::list_statements(&me, &q, total).unwrap() {
                statements.push((format!("metadata where {f:?} page {page}"), st));
            }
        }
        for kind in [None, Some(AnalysisKind::Classification), Some(AnalysisKind::Panel)] {
            let q = ListQuery { filter: None, sort: None, page: Some(page), per_page: Some("50") };
            for st in analyses::list_statements(&me, &q, kind, total).unwrap() {
                statements.push((format!("analyses of {kind:?} page {page}"), st));
            }
        }
    }
    let public = &filters[..3];
    for filter in public {
        for (page, total) in pages {
            let f = filter.as_ref().map(|v| v.to_string());
            let q = ListQuery { filter: f.as_deref(), sort: None, page: Some(page), per_page: Some("50") };
            for st in samples::list_public_statements(&q, total).unwrap() {
                statements.push((format!("public samples where {f:?} page {page}"), st));
            }
        }
    }
    // The lists of records a caller sees few enough of to filter them all: they read no table
    // of samples or their records, nor every link of a tag.
    let admin = Caller(Some(mgds_server::store::caller::User { role: mgds_api::Role::Admin, ..me.0.clone().unwrap() }));
    for who in [&me, &admin] {
        let first = ListQuery { filter: None, sort: None, page: Some("1"), per_page: Some("50") };
        let by_name = json!({"filename": false}).to_string();
        for sort in [None, Some(by_name.as_str())] {
            let q = ListQuery { sort, ..first };
            for st in documents::list_statements(who, &q, 2_000).unwrap() {
                statements
                    .push((format!("documents sort {sort:?} of admin {}", who.0.as_ref().unwrap().manages_org()), st));
            }
        }
        for st in tags::list_statements(who, &first).unwrap() {
            statements.push(("tags".into(), st));
        }
        for st in projects::list_statements(who, &first).unwrap() {
            statements.push(("projects".into(), st));
        }
    }
    let (mut checked, mut bad) = (0, Vec::new());
    for (what, (sql, binds)) in &statements {
        let plan = plan(&svc.state.db, sql, binds).await;
        checked += 1;
        let scans = plan.iter().any(|l| {
            let step = l.trim_start_matches(|c: char| !c.is_ascii_alphabetic()).trim_end();
            ["samples", "metadata", "analyses", "sample_tags", "documents"]
                .iter()
                .any(|t| l.contains(&format!("Seq Scan on {t}")))
                || ["s", "m", "a", "st", "d"]
                    .iter()
                    .any(|t| step.starts_with(&format!("SCAN {t} ")) || step == format!("SCAN {t}"))
        });
        if scans {
            bad.push(format!("{what}:\n{sql}\n{}", plan.join("\n")));
        }
    }
    assert!(bad.is_empty(), "{} of {checked} statements scan a table:\n{}", bad.len(), bad.join("\n\n"));
    // And the answers over HTTP agree with the rows.
    let mine = &users[0];
    let r = svc.as_user(Some(mine), Method::GET, "/api/v1/samples?per_page=50&page=250").send().await.unwrap();
    let total: u64 = r.headers()["x-total-count"].to_str().unwrap().parse().unwrap();
    let (s, page) = json_of(r).await;
    assert_eq!(s, 200);
    // Owner 0's own, the public ones of others, and the shared ones of their organisation.
    let seen: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM samples WHERE owner_id = $1 OR visibility = 'public' \
         OR (visibility = 'shared' AND owner_id IN (SELECT id FROM users WHERE organization_id = $2))",
    )
    .bind(&ids[0])
    .bind(&org)
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(total as i64, seen);
    assert_eq!(page.as_array().unwrap().len(), 50);
}

/// One user's write that holds its records (a slow pre-upload, a callback) does not hold up
/// another user's; a second write of the same user waits for it. On SQLite every write waits
/// (one writer at a time), which the test states rather than hides.
#[tokio::test]
async fn one_users_write_does_not_wait_for_anothers() {
    let svc = Service::start().await;
    let (alice, bob) = (svc.user("alice@lab.org").await, svc.user("bob@lab.org").await);
    let postgres = Backend::of(&svc.state.db) == Backend::Postgres;
    // Alice's write under way: her records held until it ends.
    let held = db::begin_write(&svc.state.db, Scope::User(&alice.id)).await.unwrap();
    let preupload = |u: &TestUser, name: &str| {
        let body = json!({"metadata": {"external_sample_id": name}});
        svc.as_user(Some(u), Method::POST, "/api/v1/samples/preupload").json(&body).send()
    };
    let bobs = tokio::time::timeout(Duration::from_secs(5), preupload(&bob, "b1")).await;
    if postgres {
        let r = bobs.expect("Bob's pre-upload waited for Alice's write").unwrap();
        assert_eq!(r.status().as_u16(), 200);
        // Alice's own next write waits until hers ends.
        let alices = tokio::spawn(preupload(&alice, "a1"));
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!alices.is_finished(), "Alice's second write did not wait for her first");
        held.commit().await.unwrap();
        let r = alices.await.unwrap().unwrap();
        assert_eq!(r.status().as_u16(), 200);
    } else {
        assert!(bobs.is_err(), "on SQLite a write waits for the one under way");
        held.commit().await.unwrap();
    }
}

/// Two hosts' janitors: one round at a time, whichever takes the turn.
#[tokio::test]
async fn one_janitor_round_at_a_time() {
    let svc = Service::start().await;
    let (db, hold) = (&svc.state.db, Duration::from_secs(60));
    use mgds_server::janitor::take_turn;
    assert!(take_turn(db, "test-round", "host-a", hold).await.unwrap());
    assert!(!take_turn(db, "test-round", "host-b", hold).await.unwrap());
    assert!(!take_turn(db, "test-round", "host-a", hold).await.unwrap(), "a turn is taken once");
    sqlx::query("UPDATE leases SET until = '2000-01-01T00:00:00.000000+00:00' WHERE name = 'test-round'")
        .execute(db)
        .await
        .unwrap();
    assert!(take_turn(db, "test-round", "host-b", hold).await.unwrap(), "a lapsed turn is taken");
}
