//! The Documents screen: the documents the user uploaded and those colleagues shared with them,
//! uploads (any file) and downloads with progress and cancel, sharing by e-mail, renaming and
//! deleting. Only a document's uploader may change it; the screen says so instead of offering
//! what the service would refuse.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mgds_api::Document;
use mgds_client::{CancellationToken, Client, Sort};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use ts_rs::TS;

use crate::error::{CmdError, CmdResult, sentence};
use crate::people::{self, Me, Person};
use crate::samples::id_of;

/// One document on the screen.
#[derive(Debug, Clone, Serialize, TS)]
pub struct DocumentRow {
    /// Its id.
    pub id: String,
    /// Its file name.
    pub filename: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was uploaded (RFC 3339).
    pub created_at: String,
    /// Who uploaded it (its owner).
    pub owner: Person,
    /// Whether the signed-in user uploaded it (and so may rename, share or delete it).
    pub mine: bool,
    /// Who else may download it.
    pub shared_with: Vec<Person>,
}

/// The Documents screen.
#[derive(Debug, Clone, Serialize, TS)]
pub struct DocumentsView {
    /// The user's own documents and those shared with them, newest first.
    pub documents: Vec<DocumentRow>,
    /// The signed-in user's e-mail address.
    pub email: Option<String>,
}

/// The user's documents and those shared with them. (An organisation's administrator may see
/// more of its documents through the service; this screen keeps to the two lists a person
/// expects.)
pub async fn list(client: &Client) -> CmdResult<DocumentsView> {
    let me = people::me(client).await?;
    let all = client.documents().list().sort(Sort::desc("created_at")).per_page(mgds_api::MAX_PER_PAGE).all().await?;
    let docs: Vec<Document> =
        all.into_iter().filter(|d| d.uploader.id() == me.id || d.downloaders.iter().any(|u| u.id() == me.id)).collect();
    let ids = docs.iter().flat_map(|d| {
        std::iter::once(d.uploader.id().to_string()).chain(d.downloaders.iter().map(|u| u.id().to_string()))
    });
    let emails = people::emails(client, ids.collect::<Vec<_>>()).await?;
    Ok(DocumentsView { documents: docs.iter().map(|d| row(d, &emails, &me)).collect(), email: me.email })
}

fn row(d: &Document, emails: &HashMap<String, String>, me: &Me) -> DocumentRow {
    DocumentRow {
        id: id_of(&d.uri),
        filename: d.filename.clone(),
        size: d.size,
        created_at: d.created_at.clone(),
        owner: people::person(d.uploader.id(), emails, me),
        mine: d.uploader.id() == me.id,
        shared_with: d.downloaders.iter().map(|u| people::person(u.id(), emails, me)).collect(),
    }
}

/// Lets the colleague with this e-mail address download document `id`.
pub async fn share(client: &Client, id: &str, email: &str) -> CmdResult<DocumentsView> {
    let me = people::me(client).await?;
    let user = people::find(client, email, &me).await?;
    client.documents().share(id, user.as_str()).await?;
    list(client).await
}

/// Stops `user` downloading document `id`.
pub async fn unshare(client: &Client, id: &str, user: &str) -> CmdResult<DocumentsView> {
    client.documents().unshare(id, user).await?;
    list(client).await
}

/// Renames document `id` (the service keeps letters, digits, `-`, `_` and `.`; spaces become `_`).
pub async fn rename(client: &Client, id: &str, filename: &str) -> CmdResult<DocumentsView> {
    let name = mgds_api::clean_filename(filename).map_err(|e| name_problem(filename, &e))?;
    client.documents().rename(id, &name).await?;
    list(client).await
}

fn name_problem(typed: &str, e: &mgds_api::FilenameError) -> CmdError {
    use mgds_api::FilenameError as E;
    let message = match e {
        E::Empty => "Type a name for the document.".to_string(),
        E::BadCharacters { chars } => format!(
            "A document's name may hold only letters, digits, “-”, “_” and “.” (spaces become “_”); “{}” has {}.",
            typed.trim(),
            chars.iter().map(|c| format!("“{c}”")).collect::<Vec<_>>().join(", ")
        ),
        E::TooLong => "A document's name may be at most 255 characters long; type a shorter one.".to_string(),
        other => sentence(&other.to_string()),
    };
    CmdError::new("invalid", message)
}

/// Deletes document `id` and its file.
pub async fn delete(client: &Client, id: &str) -> CmdResult<DocumentsView> {
    client.documents().delete(id).await?;
    list(client).await
}

/// The name a file is uploaded under: the service keeps only ASCII letters, digits, `-`, `_`
/// and `.`, so anything else (spaces, accents, brackets) becomes `_`.
pub fn document_name(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let cleaned: String = name
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .collect();
    let cleaned: String = cleaned.chars().take(255).collect();
    if cleaned.trim_matches('.').is_empty() { "document".to_string() } else { cleaned }
}

/// Why `path` cannot be uploaded as a document, checked before anything is sent: it must be a
/// file this user can read, with at least one byte.
pub fn check_readable(path: &Path) -> Result<u64, String> {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| path.display().to_string());
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "{name} is no longer there; it was moved or deleted. Choose it again where it is now."
            ));
        }
        Err(e) => return Err(unreadable(&name, &e)),
    };
    if meta.is_dir() {
        return Err(format!(
            "{name} is a folder. A document is one file: drop the files inside it, or make an archive (.zip) of the folder first."
        ));
    }
    if meta.len() == 0 {
        return Err(format!("{name} is empty (0 bytes); there is nothing to upload."));
    }
    // Opening it is the test: permissions, a locked file, a broken network share.
    let mut f = std::fs::File::open(path).map_err(|e| unreadable(&name, &e))?;
    let mut first = [0u8; 1];
    std::io::Read::read(&mut f, &mut first).map_err(|e| unreadable(&name, &e))?;
    Ok(meta.len())
}

fn unreadable(name: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        format!(
            "{name} could not be read: your user account is not allowed to open it. Copy it somewhere you can open \
             it, or ask the file's owner for read access, then upload it again."
        )
    } else {
        format!(
            "{name} could not be read ({e}). If it is on a network share or a USB disk, check that it is still \
             connected, then upload it again."
        )
    }
}

/// Upload or download.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, TS)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// A file sent to the service as a document.
    Upload,
    /// A document saved to this computer.
    Download,
}

/// Where a document transfer stands.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, TS)]
#[serde(rename_all = "snake_case")]
pub enum TransferState {
    /// Queued for a free slot.
    Waiting,
    /// Bytes are moving.
    Moving,
    /// Finished.
    Done,
    /// It failed (`error` says why).
    Failed,
    /// The user cancelled it; nothing of it was kept.
    Cancelled,
}

/// A document transfer's progress, sent in `document-transfer` events.
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct DocumentTransfer {
    /// The window's id for the transfer.
    pub id: String,
    /// Upload or download.
    pub direction: Direction,
    /// The file's name.
    pub name: String,
    /// Where it stands.
    pub state: TransferState,
    /// Bytes moved.
    pub done: u64,
    /// Bytes in all (0 while not known).
    pub total: u64,
    /// The document, once uploaded (or the one being downloaded).
    pub document_id: Option<String>,
    /// Where a download was saved.
    pub path: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
}

impl crate::events::ShellEvent for DocumentTransfer {
    const NAME: &'static str = "document-transfer";
}

/// One file to upload as a document.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct DocumentFile {
    /// The window's id for this upload (its events carry it).
    pub id: String,
    /// The file.
    pub path: String,
}

/// The document transfers under way (managed state).
pub struct DocumentTransfers {
    tokens: Arc<Mutex<HashMap<String, CancellationToken>>>,
    // Two uploads at a time, as for samples; downloads do not wait.
    slots: Arc<Semaphore>,
}

impl Default for DocumentTransfers {
    fn default() -> Self {
        DocumentTransfers { tokens: Arc::new(Mutex::new(HashMap::new())), slots: Arc::new(Semaphore::new(2)) }
    }
}

/// Progress is sent at most this often per transfer.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Calls `emit` with (done, total) at most every [`PROGRESS_EVERY`], and always for the last byte.
fn throttled(emit: impl Fn(u64, u64) + Send + Sync + 'static) -> impl Fn(u64, u64) + Send + Sync + 'static {
    let last = Mutex::new(None::<Instant>);
    move |done, total| {
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        if done >= total || last.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) {
            *last = Some(Instant::now());
            emit(done, total);
        }
    }
}

impl DocumentTransfers {
    fn token(&self, id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        self.tokens.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_string(), token.clone());
        token
    }

    fn forget(tokens: &Mutex<HashMap<String, CancellationToken>>, id: &str) {
        tokens.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }

    /// Uploads each file as a document; `emit` is called with each change.
    pub fn upload(
        &self,
        client: Client,
        files: Vec<DocumentFile>,
        emit: impl Fn(DocumentTransfer) + Send + Sync + Clone + 'static,
    ) {
        for file in files {
            let token = self.token(&file.id);
            let (client, emit, tokens, slots) = (client.clone(), emit.clone(), self.tokens.clone(), self.slots.clone());
            tokio::spawn(async move {
                let path = PathBuf::from(&file.path);
                let name = document_name(&path);
                let event = {
                    let (id, name) = (file.id.clone(), name.clone());
                    move |state: TransferState, done: u64, total: u64, error: Option<String>| DocumentTransfer {
                        id: id.clone(),
                        direction: Direction::Upload,
                        name: name.clone(),
                        state,
                        done,
                        total,
                        document_id: None,
                        path: None,
                        error,
                    }
                };
                let checked = {
                    let p = path.clone();
                    tokio::task::spawn_blocking(move || check_readable(&p))
                        .await
                        .unwrap_or_else(|e| Err(format!("The file could not be checked ({e}).")))
                };
                let total = match checked {
                    Ok(size) => size,
                    Err(why) => {
                        emit(event(TransferState::Failed, 0, 0, Some(why)));
                        Self::forget(&tokens, &file.id);
                        return;
                    }
                };
                emit(event(TransferState::Waiting, 0, total, None));
                let _slot = tokio::select! {
                    s = slots.acquire_owned() => s,
                    () = token.cancelled() => {
                        emit(event(TransferState::Cancelled, 0, total, None));
                        Self::forget(&tokens, &file.id);
                        return;
                    }
                };
                let (on_progress, ev) = (emit.clone(), event.clone());
                let progress = throttled(move |done, total| on_progress(ev(TransferState::Moving, done, total, None)));
                emit(event(TransferState::Moving, 0, total, None));
                let sent = client
                    .documents()
                    .upload(&path)
                    .filename(name.clone())
                    .cancel_token(token)
                    .progress(progress)
                    .send()
                    .await;
                emit(match sent {
                    Ok(d) => DocumentTransfer {
                        document_id: Some(id_of(&d.uri)),
                        ..event(TransferState::Done, total, total, None)
                    },
                    Err(mgds_client::Error::Cancelled) => event(TransferState::Cancelled, 0, total, None),
                    Err(e) => event(TransferState::Failed, 0, total, Some(upload_problem(&name, e))),
                });
                Self::forget(&tokens, &file.id);
            });
        }
    }

    /// Saves document `document` to `dest`; `emit` is called with each change. The file appears
    /// at `dest` only once it is whole; a cancelled or failed download leaves nothing.
    pub fn download(
        &self,
        client: Client,
        id: String,
        document: String,
        dest: PathBuf,
        emit: impl Fn(DocumentTransfer) + Send + Sync + Clone + 'static,
    ) {
        let token = self.token(&id);
        let tokens = self.tokens.clone();
        tokio::spawn(async move {
            let name = dest.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            let event = {
                let (id, name, document, dest) = (id.clone(), name.clone(), document.clone(), dest.clone());
                move |state: TransferState, done: u64, total: u64, error: Option<String>| DocumentTransfer {
                    id: id.clone(),
                    direction: Direction::Download,
                    name: name.clone(),
                    state,
                    done,
                    total,
                    document_id: Some(document.clone()),
                    path: Some(dest.display().to_string()),
                    error,
                }
            };
            emit(event(TransferState::Moving, 0, 0, None));
            let (on_progress, ev) = (emit.clone(), event.clone());
            let progress: mgds_client::Progress =
                Arc::new(throttled(move |done, total| on_progress(ev(TransferState::Moving, done, total, None))));
            let docs = client.documents();
            // Dropping the download (on cancel) removes its temporary file.
            let outcome = tokio::select! {
                r = docs.download_with_progress(document.as_str(), &dest, Some(progress)) => Some(r),
                () = token.cancelled() => None,
            };
            emit(match outcome {
                None => event(TransferState::Cancelled, 0, 0, None),
                Some(Ok(n)) => event(TransferState::Done, n, n, None),
                Some(Err(e)) => event(TransferState::Failed, 0, 0, Some(download_problem(&dest, e))),
            });
            Self::forget(&tokens, &id);
        });
    }

    /// Cancels transfer `id`; answers whether it was under way.
    pub fn cancel(&self, id: &str) -> bool {
        match self.tokens.lock().unwrap_or_else(|e| e.into_inner()).remove(id) {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }
}

fn upload_problem(name: &str, e: mgds_client::Error) -> String {
    match e {
        mgds_client::Error::Io { .. } => format!(
            "{name} could not be read while it was being sent ({}). Check that it is still there and not being \
             changed, then upload it again.",
            e
        ),
        other => CmdError::from(other).message,
    }
}

fn download_problem(dest: &Path, e: mgds_client::Error) -> String {
    match e {
        mgds_client::Error::Io { .. } => format!(
            "The document could not be saved to {} ({e}). Choose a folder you may write to, and check the disk is \
             not full.",
            dest.display()
        ),
        other => CmdError::from(other).message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_what_the_service_accepts() {
        assert_eq!(document_name(Path::new("/x/Run 42 sheet (v2).csv")), "Run_42_sheet__v2_.csv");
        assert_eq!(document_name(Path::new("/x/résumé.pdf")), "r_sum_.pdf");
        assert_eq!(document_name(Path::new("/x/SampleSheet.csv")), "SampleSheet.csv");
        assert_eq!(document_name(Path::new("/x/...")), "document");
    }

    #[test]
    fn an_unreadable_file_is_explained_before_anything_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        let gone = check_readable(&dir.path().join("gone.pdf")).unwrap_err();
        assert!(gone.starts_with("gone.pdf is no longer there"), "{gone}");
        let folder = check_readable(dir.path()).unwrap_err();
        assert!(folder.contains("is a folder"), "{folder}");
        let empty = dir.path().join("empty.txt");
        std::fs::write(&empty, "").unwrap();
        assert!(check_readable(&empty).unwrap_err().contains("empty (0 bytes)"));
        let ok = dir.path().join("ok.txt");
        std::fs::write(&ok, "plate map").unwrap();
        assert_eq!(check_readable(&ok), Ok(9));
    }

    /// The events of one transfer up to its end.
    async fn ended(
        rx: &mut tokio::sync::mpsc::UnboundedReceiver<DocumentTransfer>,
    ) -> (DocumentTransfer, Vec<TransferState>) {
        let mut states = Vec::new();
        while let Some(t) = rx.recv().await {
            states.push(t.state);
            if matches!(t.state, TransferState::Done | TransferState::Failed | TransferState::Cancelled) {
                return (t, states);
            }
        }
        panic!("the transfer never ended")
    }

    /// Two people on a real local service: one uploads a document, shares it by e-mail, renames
    /// it; the other sees it, may download but not change it; then it is unshared and deleted.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_document_is_uploaded_shared_renamed_downloaded_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let service = crate::testing::TestService::start(&dir.path().join("data"), Default::default()).await;
        let owner = service.user("lab@example.org").await;
        let colleague = service.user("colleague@example.org").await;

        let file = dir.path().join("Run 42 sheet.csv");
        let text = "Sample_ID,Well\nisolate-7,A1\n".repeat(2000);
        std::fs::write(&file, &text).unwrap();
        let transfers = DocumentTransfers::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let t = tx.clone();
        let upload = |id: &str, path: &Path| vec![DocumentFile { id: id.into(), path: path.display().to_string() }];
        transfers.upload(owner.clone(), upload("u1", &file), move |p| drop(t.send(p)));
        let (done, states) = ended(&mut rx).await;
        assert_eq!(done.state, TransferState::Done, "{done:?}");
        assert!(states.contains(&TransferState::Moving), "{states:?}");
        assert_eq!(
            (done.done, done.total, done.name.as_str()),
            (text.len() as u64, text.len() as u64, "Run_42_sheet.csv")
        );
        let id = done.document_id.clone().unwrap();

        // A file that cannot be read is refused with why, before anything is sent.
        let t = tx.clone();
        transfers.upload(owner.clone(), upload("u2", &dir.path().join("gone.pdf")), move |p| drop(t.send(p)));
        let (gone, _) = ended(&mut rx).await;
        assert_eq!(gone.state, TransferState::Failed);
        assert!(gone.error.unwrap().contains("gone.pdf is no longer there"));

        // Cancelled while it waits for a free slot: nothing is sent.
        let held = transfers.slots.clone().acquire_many_owned(2).await.unwrap();
        let t = tx.clone();
        transfers.upload(owner.clone(), upload("u3", &file), move |p| drop(t.send(p)));
        loop {
            let p = rx.recv().await.unwrap();
            if p.state == TransferState::Waiting {
                break;
            }
        }
        assert!(transfers.cancel("u3"));
        assert_eq!(ended(&mut rx).await.0.state, TransferState::Cancelled);
        drop(held);

        let mine = list(&owner).await.unwrap();
        assert_eq!(mine.documents.len(), 1);
        assert!(mine.documents[0].mine && mine.documents[0].shared_with.is_empty());
        assert_eq!(mine.email.as_deref(), Some("lab@example.org"));
        assert!(list(&colleague).await.unwrap().documents.is_empty(), "not shared yet");

        let nobody = share(&owner, &id, "nobody@example.org").await.unwrap_err();
        assert_eq!(nobody.code, "no_account");
        assert!(nobody.message.contains("nobody@example.org"), "{nobody:?}");
        assert_eq!(share(&owner, &id, "lab@example.org").await.unwrap_err().code, "invalid", "not with oneself");
        let shared = share(&owner, &id, "Colleague@Example.org").await.unwrap();
        let with: Vec<_> = shared.documents[0].shared_with.iter().map(|p| p.email.clone().unwrap()).collect();
        assert_eq!(with, ["colleague@example.org"]);

        let bad = rename(&owner, &id, "plate #3.csv").await.unwrap_err();
        assert!(bad.message.contains("“#”"), "{bad:?}");
        let renamed = rename(&owner, &id, "plate map v2.csv").await.unwrap();
        assert_eq!(renamed.documents[0].filename, "plate_map_v2.csv");

        // The colleague sees it, by whom, and may download but not change it.
        let theirs = list(&colleague).await.unwrap();
        let d = &theirs.documents[0];
        assert!(!d.mine);
        assert_eq!((d.filename.as_str(), d.owner.email.as_deref()), ("plate_map_v2.csv", Some("lab@example.org")));
        assert_eq!(rename(&colleague, &id, "mine.csv").await.unwrap_err().code, "forbidden");
        assert_eq!(delete(&colleague, &id).await.unwrap_err().code, "forbidden");
        let dest = dir.path().join("saved").join("plate_map_v2.csv");
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        let t = tx.clone();
        transfers.download(colleague.clone(), "d1".into(), id.clone(), dest.clone(), move |p| drop(t.send(p)));
        let (got, _) = ended(&mut rx).await;
        assert_eq!(got.state, TransferState::Done, "{got:?}");
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), text);

        let colleague_id = shared.documents[0].shared_with[0].id.clone();
        assert!(unshare(&owner, &id, &colleague_id).await.unwrap().documents[0].shared_with.is_empty());
        assert!(list(&colleague).await.unwrap().documents.is_empty());
        assert!(delete(&owner, &id).await.unwrap().documents.is_empty());
    }

    #[test]
    fn a_bad_new_name_names_the_characters() {
        let e = mgds_api::clean_filename("plate #3.csv").unwrap_err();
        let m = name_problem("plate #3.csv", &e).message;
        assert!(m.contains("“#”") && m.contains("“plate #3.csv”"), "{m}");
    }
}
