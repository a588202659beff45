//! A service that lies: its documents' file names try to leave the download folder, replace
//! files, or name devices. Written for these tests because a real service never sends such
//! names; the point is what `mgds` does when one does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::{mgds, ok};

/// Document ids and the file names the fake service gives them.
type Names = Arc<BTreeMap<String, String>>;

/// A fake API v1 service on 127.0.0.1:0 that answers the document routes the client uses:
/// the record, its download address, and the file (`content of <id>`).
struct Liar {
    url: String,
    rt: Option<tokio::runtime::Runtime>,
}

impl Liar {
    fn start(names: &[(&str, String)]) -> Liar {
        let names: Names = Arc::new(names.iter().map(|(id, n)| (id.to_string(), n.clone())).collect());
        let rt = tokio::runtime::Runtime::new().unwrap();
        let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route("/api/v1/documents/{id}", get(document))
            .route("/api/v1/documents/{id}/download_uri", post(download_uri))
            .route("/files/{id}", get(file))
            .with_state(names);
        rt.spawn(async move { axum::serve(listener, app).await });
        Liar { url, rt: Some(rt) }
    }
}

impl Drop for Liar {
    fn drop(&mut self) {
        // A plain drop would wait for the server, which never ends by itself.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

async fn document(State(names): State<Names>, UrlPath(id): UrlPath<String>) -> Result<Json<Value>, StatusCode> {
    let name = names.get(&id).ok_or(StatusCode::NOT_FOUND)?;
    Ok(Json(json!({
        "$uri": format!("/api/v1/documents/{id}"),
        "created_at": "2024-01-01T00:00:00Z",
        "filename": name,
        "size": format!("content of {id}").len(),
        "uploader": {"$ref": "/api/v1/users/0000000000000001"},
        "downloaders": [],
        "valid_until": null,
    })))
}

async fn download_uri(UrlPath(id): UrlPath<String>) -> Json<Value> {
    Json(json!({"download_uri": format!("/files/{id}"), "expires_in_hours": 1}))
}

async fn file(UrlPath(id): UrlPath<String>) -> String {
    format!("content of {id}")
}

/// A path outside the test's folders, removed at the end whatever happens.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The longest name `mgds` writes a service's name as, in bytes.
const MAX_NAME_BYTES: usize = 200;

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.symlink_metadata().unwrap().is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_document_s_name_from_a_service_never_leaves_the_download_folder() {
    let root = tempfile::tempdir().unwrap();
    let cfg = tempfile::tempdir().unwrap();
    // `home/` stands for the user's home, `home/out/` for the folder they download into.
    let (home, out) = (root.path().join("home"), root.path().join("home").join("out"));
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(home.join(".bashrc"), "mine").unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let absolute = RemoveOnDrop(std::env::temp_dir().join(format!("mgds-abs-{}-{nanos}", std::process::id())));
    let absolute = &absolute.0;
    let long = "x".repeat(10_000);
    let names = [
        ("00000000000000a1", "../../escape.txt".to_string()),
        ("00000000000000a2", absolute.display().to_string()),
        ("00000000000000a3", "..".to_string()),
        ("00000000000000a4", "CON".to_string()),
        ("00000000000000a5", "two\nlines.txt".to_string()),
        ("00000000000000a6", long.clone()),
        ("00000000000000a7", "../.bashrc".to_string()),
        ("00000000000000a8", "..\\..\\windows.txt".to_string()),
        ("00000000000000a9", "nul.tar.gz".to_string()),
    ];
    let liar = Liar::start(&names);
    let download = |id: &str, cwd: &Path, extra: &[&str]| {
        mgds(cfg.path(), &cfg.path().join("data"))
            .args(["documents", "download", id, "--base-url", &liar.url, "--api-key", "k"])
            .args(extra)
            .current_dir(cwd)
            .output()
            .unwrap()
    };
    for (id, _) in &names {
        ok(&download(id, &out, &[]));
    }
    let mut want: Vec<String> = [
        "escape.txt",
        absolute.file_name().unwrap().to_str().unwrap(),
        "document-00000000000000a3",
        "document-00000000000000a4",
        "two_lines.txt",
        &"x".repeat(MAX_NAME_BYTES),
        "_bashrc",
        "windows.txt",
        "document-00000000000000a9",
    ]
    .map(String::from)
    .to_vec();
    want.sort();
    let mut got: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    got.sort();
    assert_eq!(got, want);
    for (i, name) in want.iter().enumerate() {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(text.starts_with("content of 00000000000000a"), "{name}: {text}");
        assert!(!name.contains(['\n', '/', '\\']) && name.len() <= MAX_NAME_BYTES, "{i}: {name:?}");
    }
    // Nothing anywhere else: not beside or above the folder, not at the absolute path.
    assert!(!absolute.exists(), "{} was written", absolute.display());
    let mut everywhere = files_under(root.path());
    everywhere.retain(|p| p.parent() != Some(out.as_path()));
    assert_eq!(everywhere, [home.join(".bashrc")]);
    assert_eq!(std::fs::read_to_string(home.join(".bashrc")).unwrap(), "mine");

    // `-o FOLDER` is the same: the folder is the user's, the name is made safe.
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    ok(&download("00000000000000a1", &home, &["-o", elsewhere.to_str().unwrap()]));
    assert_eq!(files_under(&elsewhere), [elsewhere.join("escape.txt")]);
    assert!(!root.path().join("escape.txt").exists());
}

#[test]
fn a_document_never_replaces_a_file_under_the_service_s_name_without_force() {
    let root = tempfile::tempdir().unwrap();
    let cfg = tempfile::tempdir().unwrap();
    let liar = Liar::start(&[("00000000000000b1", "report.pdf".to_string())]);
    let mine = root.path().join("report.pdf");
    std::fs::write(&mine, "mine").unwrap();
    let download = |extra: &[&str]| {
        mgds(cfg.path(), &cfg.path().join("data"))
            .args(["documents", "download", "00000000000000b1", "--base-url", &liar.url, "--api-key", "k"])
            .args(extra)
            .current_dir(root.path())
            .output()
            .unwrap()
    };
    for extra in [&[][..], &["-o", root.path().to_str().unwrap()][..]] {
        let refused = download(extra);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success(), "{stderr}");
        assert!(stderr.contains("report.pdf already exists") && stderr.contains("--force"), "{stderr}");
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
    }
    ok(&download(&["--force"]));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "content of 00000000000000b1");
    std::fs::write(&mine, "mine").unwrap();
    ok(&download(&["-o", root.path().to_str().unwrap(), "--force"]));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "content of 00000000000000b1");
    // A file the user names with -o is theirs to replace, as before.
    std::fs::write(&mine, "mine").unwrap();
    ok(&download(&["-o", mine.to_str().unwrap()]));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "content of 00000000000000b1");
    // Nothing but the one file, and no temporary file left behind.
    assert_eq!(files_under(root.path()), [mine]);
}
