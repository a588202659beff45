// MGDS in a browser: the files the user gives the page (picked, or dropped with their folders)
// and what MGDS Desktop's shell does with files, done by the page. The screens ask for it with
// the same commands and hear of it through the same events (`provideLocally`, `emitLocally`).
//
// - Checking: the start of each file is read here (its first bytes, and its first line, through
//   the browser's own gzip); the service checks that description (`check_browser_files`) as the
//   desktop checks a file, and every read once the file is uploaded.
// - Sending: the S3 multipart flow of every client of the service, straight to its store. The
//   service starts the upload and signs each part's address (`begin_browser_upload`,
//   `sign_upload_parts`); the page sends each part, a slice of the file read from disk as it
//   goes, and keeps the part's ETag; then the service puts the parts together and confirms the
//   upload (`finish_browser_upload`). A file never sits in the page's memory.
// - Resuming: what the service answered and the tags of the parts sent are kept in this
//   browser's storage until the upload ends. A dropped connection is tried again from the part
//   it broke in; after a reload, the same file (name, size, date) given again goes on from the
//   parts stored. Signing out forgets them.
import { emitLocally, provideLocally, serviceCommand } from "../lib/transport";
import type {
  BatchRun,
  BrowserFile,
  BrowserUpload,
  BrowserUploadRequest,
  DocumentFile,
  DocumentTransfer,
  FileCheck,
  UploadBatch,
  UploadMade,
  UploadProgress,
} from "../lib/bindings";

/** The most files one drop or pick may add (the desktop's ceiling too). */
export const MAX_FILES = 2000;
/** Bytes read from the start of a file to check it. */
const HEAD = 64 * 1024;
/** Decompressed bytes looked at for the first line. */
const FIRST_LINE = 1024;
/** Uploads sent at once, as on the desktop. */
const SLOTS = 2;
/** Parts sent at once to a store that takes them in any order. The service's own endpoint
 *  takes them one after another: it appends the part that arrives next in order straight to
 *  the file, and keeps one that arrives while it does apart, to copy in at the end (two at once
 *  measured no faster, with that copy). */
const PARTS_AT_ONCE = 3;
const PARTS_AT_ONCE_IN_ORDER = 1;
/** Part addresses asked for at once. */
const SIGN_AHEAD = 16;
/** A kept upload is given up after this long (the service's upload lasts a day). */
const KEEP_MS = 20 * 3600 * 1000;
const STORAGE_PREFIX = "mgds-upload:";

/** The files the user gave, by the paths the screens name them by; `folder` when found in a
 *  folder they gave (not named by them). */
const given = new Map<string, { file: File; folder: boolean }>();
const fileAt = (path: string) => given.get(path)?.file;

/** Keeps files the user gave under paths the screens name them by (a folder's files under
 *  their folders); answers the paths. The same file given again keeps its path; another file
 *  of the same path gets a folder of its own in front (`2/…`), so its name stays its name. */
export function register(list: { file: File; path: string }[]): string[] {
  return list.map(({ file, path }) => {
    const base = path || file.name;
    let p = base;
    for (let n = 2; ; n++) {
      const known = given.get(p);
      if (!known || sameFile(known.file, file)) break;
      p = `${n}/${base}`;
    }
    given.set(p, { file, folder: base.includes("/") });
    return p;
  });
}

function sameFile(a: File, b: File): boolean {
  return a.name === b.name && a.size === b.size && a.lastModified === b.lastModified;
}

// ---- Checking ----

/** The first line of `bytes`, as text (at most `FIRST_LINE` characters). */
export function firstLine(bytes: Uint8Array): string | null {
  if (bytes.length === 0) return null;
  const end = bytes.indexOf(10);
  const line = bytes.subarray(0, Math.min(end < 0 ? bytes.length : end, FIRST_LINE));
  return new TextDecoder("utf-8", { fatal: false }).decode(line).replace(/\r$/, "");
}

/** The decompressed start of a gzip file, up to its first line's end (or `FIRST_LINE` bytes). */
async function gunzipStart(file: Blob): Promise<Uint8Array> {
  const reader = file.slice(0, 1024 * 1024).stream().pipeThrough(new DecompressionStream("gzip")).getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  try {
    while (n < FIRST_LINE) {
      const { value, done } = await reader.read();
      if (done || !value) break;
      chunks.push(value);
      n += value.length;
      if (value.includes(10)) break;
    }
  } catch (e) {
    // The slice ends inside the stream: what came out before counts.
    if (n === 0) throw e;
  } finally {
    reader.cancel().catch(() => {});
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** What the service needs to check a file: its path, size, first bytes and first line. */
export async function describe(path: string, file: Blob, fromFolder: boolean): Promise<BrowserFile> {
  const d: BrowserFile = { path, size: file.size, magic: [], first_line: null, unreadable: null, from_folder: fromFolder };
  try {
    const head = new Uint8Array(await file.slice(0, HEAD).arrayBuffer());
    d.magic = Array.from(head.subarray(0, 8));
    d.first_line = firstLine(head[0] === 0x1f && head[1] === 0x8b ? await gunzipStart(file) : head);
  } catch (e) {
    d.unreadable = e instanceof Error ? e.message : String(e);
  }
  return d;
}

async function checkFiles(paths: string[]): Promise<FileCheck[]> {
  if (paths.length > MAX_FILES) {
    throw { code: "invalid", message: `${paths.length} files were given; add at most ${MAX_FILES} at a time.` };
  }
  const described: BrowserFile[] = [];
  for (let i = 0; i < paths.length; i += 16) {
    const batch = paths.slice(i, i + 16).flatMap((p) => {
      const g = given.get(p);
      return g ? [describe(p, g.file, g.folder)] : [];
    });
    described.push(...(await Promise.all(batch)));
  }
  return serviceCommand<FileCheck[]>("check_browser_files", { files: described });
}

// ---- Sending ----

class Stop extends Error {}

/** One upload under way (a sample's file or pair, or a document). */
type Running = { cancelled: boolean; requests: Set<XMLHttpRequest>; upload: BrowserUpload | null; key: string };
const running = new Map<string, Running>();
/** The kept uploads being sent in this page: one file is sent once at a time. */
const sending = new Set<string>();
let free = SLOTS;
const waiting: (() => void)[] = [];

async function slot(): Promise<void> {
  if (free > 0) {
    free -= 1;
    return;
  }
  await new Promise<void>((resolve) => waiting.push(resolve));
}

function release() {
  const next = waiting.shift();
  if (next) next();
  else free += 1;
}

/** Uploads waiting for a slot, by id: cancelling one ends its wait at once. */
const waiters = new Map<string, () => void>();

/** A slot, unless the upload is cancelled while it waits (then `Stop`, with no slot held). */
async function slotFor(id: string, run: Running): Promise<void> {
  let stopped = false;
  const got = slot();
  await Promise.race([got, new Promise<void>((resolve) => waiters.set(id, () => ((stopped = true), resolve())))]);
  waiters.delete(id);
  if (stopped || run.cancelled) {
    // The slot, when it comes, goes straight to the next.
    void got.then(release);
    throw new Stop();
  }
}

type Kept = { upload: BrowserUpload; etags: string[][]; at: number };

function keyOf(kind: string, files: File[]): string {
  return STORAGE_PREFIX + JSON.stringify([kind, ...files.map((f) => [f.name, f.size, f.lastModified])]);
}

function load(key: string): Kept | null {
  try {
    const k = JSON.parse(localStorage.getItem(key) ?? "null") as Kept | null;
    if (k && Date.now() - k.at < KEEP_MS) return k;
  } catch {
    // Unreadable: started again.
  }
  forget(key);
  return null;
}

function keep(key: string, k: Kept) {
  if (!sending.has(key)) return;
  try {
    localStorage.setItem(key, JSON.stringify(k));
  } catch {
    // Storage full or refused: the upload goes on; only a reload would start it again.
  }
}

function forget(key: string) {
  try {
    localStorage.removeItem(key);
  } catch {
    // Nothing kept.
  }
}

/** Forgets every upload kept for resuming (signing out; the service's side expires). */
export function forgetKeptUploads() {
  try {
    for (const k of Object.keys(localStorage)) if (k.startsWith(STORAGE_PREFIX)) localStorage.removeItem(k);
  } catch {
    // Nothing kept.
  }
}

type PartFailure = { transient: boolean; expired: boolean; message: string };

/** PUTs one part to its signed address; answers its ETag. */
function putPart(run: Running, url: string, body: Blob, progress: (loaded: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    if (run.cancelled) return reject(new Stop());
    const xhr = new XMLHttpRequest();
    run.requests.add(xhr);
    const done = () => run.requests.delete(xhr);
    xhr.open("PUT", url);
    // A part that moves nothing for this long is given up, and sent again.
    xhr.timeout = 10 * 60 * 1000;
    xhr.upload.onprogress = (e) => progress(e.loaded);
    xhr.onload = () => {
      done();
      if (xhr.status >= 200 && xhr.status < 300) {
        const etag = xhr.getResponseHeader("ETag");
        if (etag) return resolve(etag);
        return reject({ transient: false, expired: false, message: "The store did not show the part's ETag to this page (its CORS rules must expose it)." } satisfies PartFailure);
      }
      const text = xhr.responseText ?? "";
      const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? "";
      const said = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? code;
      reject({
        transient: xhr.status >= 500 || xhr.status === 408 || xhr.status === 429,
        expired: xhr.status === 403 && /expired/i.test(code + said),
        message: `The store refused a part (${xhr.status}${said ? `: ${said}` : ""}).`,
      } satisfies PartFailure);
    };
    xhr.onerror = () => {
      done();
      reject({ transient: true, expired: false, message: "The connection dropped." } satisfies PartFailure);
    };
    xhr.ontimeout = xhr.onerror;
    xhr.onabort = () => {
      done();
      reject(new Stop());
    };
    xhr.send(body);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits between tries of a part: the connection may take minutes to come back. */
const WAITS = [1, 2, 4, 8, 15, 30, 30, 60, 60, 60, 60, 60].map((s) => s * 1000);

/**
 * Sends `files` (read 1 and read 2 of a pair, or one file) as the upload `request` asks;
 * `progress(sent, total)` as it goes, `retrying(why)` while a part waits to be sent again.
 */
async function sendFiles(
  run: Running,
  files: File[],
  request: BrowserUploadRequest,
  progress: (sent: number, total: number) => void,
  retrying: (why: string | null) => void,
): Promise<UploadMade> {
  if (sending.has(run.key)) throw { code: "invalid", message: "This file is being uploaded already." };
  sending.add(run.key);
  try {
    return await sendKept(run, files, request, progress, retrying);
  } finally {
    sending.delete(run.key);
  }
}

async function sendKept(
  run: Running,
  files: File[],
  request: BrowserUploadRequest,
  progress: (sent: number, total: number) => void,
  retrying: (why: string | null) => void,
): Promise<UploadMade> {
  let kept = load(run.key);
  if (!kept || kept.upload.files.length !== files.length || kept.upload.files.some((f, i) => f.size !== files[i].size)) {
    const upload = await serviceCommand<BrowserUpload>("begin_browser_upload", { request });
    kept = { upload, etags: upload.files.map(() => []), at: Date.now() };
    run.upload = upload;
    if (run.cancelled) {
      // Cancelled while the service started it: it goes now.
      await serviceCommand("cancel_browser_upload", { upload }).catch(() => {});
      throw new Stop();
    }
    keep(run.key, kept);
  }
  const k = kept;
  run.upload = k.upload;
  const total = files.reduce((n, f) => n + f.size, 0);
  const sizeOf = (i: number, n: number) => {
    const f = k.upload.files[i];
    return Math.min(f.part_size, f.size - (n - 1) * f.part_size);
  };
  let stored = 0;
  k.upload.files.forEach((_, i) => k.etags[i].forEach((t, j) => t && (stored += sizeOf(i, j + 1))));
  const moving = new Map<string, number>();
  const report = () => progress(stored + [...moving.values()].reduce((a, b) => a + b, 0), total);
  report();

  for (let i = 0; i < k.upload.files.length; i++) {
    const f = k.upload.files[i];
    const todo: number[] = [];
    for (let n = 1; n <= f.parts; n++) if (!k.etags[i][n - 1]) todo.push(n);
    const addresses = new Map<number, string>();
    const address = async (n: number) => {
      if (!addresses.has(n)) {
        const next = [n, ...todo.filter((m) => m > n && !addresses.has(m)).slice(0, SIGN_AHEAD - 1)];
        const urls = await serviceCommand<string[]>("sign_upload_parts", { upload: k.upload, file: i, parts: next });
        next.forEach((m, j) => addresses.set(m, urls[j]));
      }
      return addresses.get(n)!;
    };
    let failed = false;
    const sendOne = async (n: number) => {
      const start = (n - 1) * f.part_size;
      const body = files[i].slice(start, start + sizeOf(i, n));
      const id = `${i}:${n}`;
      let signedAgain = false;
      for (let attempt = 0; ; attempt++) {
        if (failed) throw new Stop();
        if (run.cancelled) throw new Stop();
        try {
          const etag = await putPart(run, await address(n), body, (loaded) => {
            moving.set(id, loaded);
            report();
          });
          moving.delete(id);
          if (run.cancelled) throw new Stop();
          k.etags[i][n - 1] = etag;
          stored += body.size;
          keep(run.key, k);
          retrying(null);
          report();
          return;
        } catch (e) {
          moving.delete(id);
          report();
          if (e instanceof Stop || run.cancelled) throw new Stop();
          const failure = e as PartFailure;
          // An address that expired (a computer asleep) is signed again, once.
          const again = failure.expired && !signedAgain;
          if (again) {
            addresses.delete(n);
            signedAgain = true;
          } else if (!failure.transient || attempt >= WAITS.length) {
            throw { code: "failed", message: failure.message ?? String(e) };
          }
          const wait = again ? 0 : WAITS[attempt];
          if (wait > 0) retrying(`${failure.message} Trying again in ${Math.round(wait / 1000)} s, from the part it broke in.`);
          await sleep(wait);
        }
      }
    };
    const queue = [...todo];
    const lanes = Array.from({ length: k.upload.in_order ? PARTS_AT_ONCE_IN_ORDER : PARTS_AT_ONCE }, async () => {
      try {
        for (let n = queue.shift(); n !== undefined; n = queue.shift()) await sendOne(n);
      } catch (e) {
        // One part failing stops the others: the upload fails (and can be tried again).
        failed = true;
        for (const r of run.requests) r.abort();
        throw e;
      }
    });
    const ended = await Promise.allSettled(lanes);
    const why = ended.find((r): r is PromiseRejectedResult => r.status === "rejected" && !(r.reason instanceof Stop));
    if (why) throw why.reason;
    if (ended.some((r) => r.status === "rejected")) throw new Stop();
  }
  if (run.cancelled) throw new Stop();
  try {
    const made = await serviceCommand<UploadMade>("finish_browser_upload", { upload: k.upload, etags: k.etags });
    forget(run.key);
    return made;
  } catch (e) {
    // Parts the store no longer has, or an upload the service no longer knows: the next try
    // starts again from the beginning (a connection lost on the way keeps what is stored).
    if (!(e && typeof e === "object" && "code" in e && (e as { code: string }).code === "unreachable")) forget(run.key);
    throw e;
  }
}

async function cancelRun(id: string): Promise<boolean> {
  const run = running.get(id);
  if (!run) return false;
  run.cancelled = true;
  for (const r of run.requests) r.abort();
  const waited = waiters.get(id);
  if (waited) waited();
  if (run.key) forget(run.key);
  if (run.upload) await serviceCommand("cancel_browser_upload", { upload: run.upload }).catch(() => {});
  return true;
}

const words = (e: unknown) =>
  e && typeof e === "object" && "message" in e ? String((e as { message: unknown }).message) : String(e);

function gone(path: string): never {
  throw { code: "not_found", message: `${path} is no longer at hand in this page: add the file again.` };
}

async function uploadSample(id: string, file: { path: string; mate?: string | null }, batch: UploadBatch) {
  const emit = (p: Partial<UploadProgress> & Pick<UploadProgress, "state">) =>
    emitLocally<UploadProgress>("upload-progress", { id, sent: 0, total: 0, sample_id: null, error: null, ...p });
  const r1 = fileAt(file.path);
  const r2 = file.mate ? fileAt(file.mate) : undefined;
  const files = r2 ? [r1, r2] : [r1];
  const run: Running = { cancelled: false, requests: new Set(), upload: null, key: "" };
  running.set(id, run);
  const total = files.reduce((n, f) => n + (f?.size ?? 0), 0);
  emit({ state: "waiting", total });
  let sent = 0;
  try {
    await slotFor(id, run);
  } catch {
    running.delete(id);
    emit({ state: "cancelled", total });
    return;
  }
  try {
    if (!r1) gone(file.path);
    if (file.mate && !r2) gone(file.mate);
    const have = files as File[];
    run.key = keyOf("sample", have);
    const request: BrowserUploadRequest = {
      kind: "sample",
      name: r1.name,
      size: r1.size,
      mate: r2 ? { name: r2.name, size: r2.size } : null,
      tags: batch.tags ?? [],
      project: batch.project ?? null,
      metadata: batch.metadata ?? null,
    };
    const made = await sendFiles(
      run,
      have,
      request,
      (s, t) => {
        sent = s;
        emit({ state: "sending", sent: s, total: t });
      },
      (why) => emit(why ? { state: "retrying", sent, total, error: why } : { state: "sending", sent, total }),
    );
    emit({ state: "done", sent: total, total, sample_id: made.sample_id });
  } catch (e) {
    if (e instanceof Stop || run.cancelled) emit({ state: "cancelled", total });
    else emit({ state: "failed", sent, total, error: words(e) });
  } finally {
    running.delete(id);
    release();
  }
}

async function uploadDocument(f: DocumentFile) {
  const file = fileAt(f.path);
  const base: DocumentTransfer = {
    id: f.id,
    direction: "upload",
    name: file?.name ?? f.path,
    state: "waiting",
    done: 0,
    total: file?.size ?? 0,
    document_id: null,
    path: null,
    error: null,
  };
  const emit = (p: Partial<DocumentTransfer>) => emitLocally<DocumentTransfer>("document-transfer", { ...base, ...p });
  const run: Running = { cancelled: false, requests: new Set(), upload: null, key: "" };
  running.set(f.id, run);
  emit({});
  try {
    await slotFor(f.id, run);
  } catch {
    running.delete(f.id);
    emit({ state: "cancelled" });
    return;
  }
  let done = 0;
  try {
    if (!file) gone(f.path);
    run.key = keyOf("document", [file]);
    const made = await sendFiles(
      run,
      [file],
      { kind: "document", name: file.name, size: file.size, mate: null, tags: [], project: null, metadata: null },
      (d, total) => {
        done = d;
        emit({ state: "moving", done: d, total });
      },
      (why) => emit({ state: "moving", done, error: why }),
    );
    emit({ state: "done", done: file.size, document_id: made.document_id });
  } catch (e) {
    if (e instanceof Stop || run.cancelled) emit({ state: "cancelled" });
    else emit({ state: "failed", error: words(e) });
  } finally {
    running.delete(f.id);
    release();
  }
}

// ---- Picking and dropping ----

const pickers = new Map<string, HTMLInputElement>();
let pending: ((paths: string[]) => void) | null = null;

/** The page's file inputs: read files, a folder of them, documents. A choice answers the pick
 *  that opened it; one made otherwise (the input driven directly) counts as a drop. */
function picker(kind: "files" | "folder" | "documents"): HTMLInputElement {
  let input = pickers.get(kind);
  if (input) return input;
  input = document.createElement("input");
  input.type = "file";
  input.multiple = true;
  input.hidden = true;
  input.dataset.testid = `browser-pick-${kind}`;
  if (kind === "folder") input.webkitdirectory = true;
  if (kind === "files") input.accept = ".fastq,.fq,.fasta,.fa,.fna,.gz,.bz2,.xz,.zst";
  const chosen = (paths: string[]) => {
    const answer = pending;
    pending = null;
    if (answer) answer(paths);
    else if (paths.length) emitLocally("tauri://drag-drop", { paths });
  };
  input.addEventListener("change", async () => {
    const all = [...(input!.files ?? [])].map((f) => ({ file: f, path: f.webkitRelativePath || f.name }));
    input!.value = "";
    // A folder's files: only its reads are read.
    const files = kind === "folder" ? await sequenceFiles(all.slice(0, MAX_WALKED), (f) => f.path).catch(() => all) : all;
    chosen(register(files.slice(0, MAX_FILES + 1)));
  });
  input.addEventListener("cancel", () => chosen([]));
  document.body.append(input);
  pickers.set(kind, input);
  return input;
}

function pick(kind: "files" | "folder" | "documents"): Promise<string[]> {
  const input = picker(kind);
  pending?.([]);
  return new Promise((resolve) => {
    pending = resolve;
    input.click();
  });
}

/** Entries of files found in folders looked at, at most: a sequencer's run folder holds tens
 *  of thousands of other files (images, metrics) beside its reads. */
const MAX_WALKED = 200_000;

/** Which of `items`, found in folders the user gave, are sequence files (by their paths, as
 *  the service tells them: the desktop's rule), so that only those are read. */
async function sequenceFiles<T>(items: T[], pathOf: (t: T) => string): Promise<T[]> {
  const kept: T[] = [];
  for (let i = 0; i < items.length; i += 10_000) {
    const batch = items.slice(i, i + 10_000);
    const yes = await serviceCommand<boolean[]>("sequence_file_paths", { paths: batch.map(pathOf) });
    batch.forEach((t, j) => yes[j] && kept.push(t));
  }
  return kept;
}

/** The file entries under a dropped entry (folders walked, at most `MAX_WALKED`), with their
 *  paths and whether they were found in a folder. */
async function walk(entry: FileSystemEntry, out: { entry: FileSystemFileEntry; path: string; inFolder: boolean }[], depth = 0): Promise<void> {
  if (out.length >= MAX_WALKED) return;
  if (entry.isFile) {
    out.push({ entry: entry as FileSystemFileEntry, path: entry.fullPath.replace(/^\//, ""), inFolder: depth > 0 });
  } else if (entry.isDirectory) {
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
      if (batch.length === 0) break;
      for (const e of batch) await walk(e, out, depth + 1);
      if (out.length >= MAX_WALKED) return;
    }
  }
}

/** Drops on the page, told to the screens as the desktop's window tells them. */
function listenForDrops() {
  let depth = 0;
  const carriesFiles = (e: DragEvent) => [...(e.dataTransfer?.types ?? [])].includes("Files");
  window.addEventListener("dragenter", (e) => {
    if (!carriesFiles(e)) return;
    depth += 1;
    emitLocally("tauri://drag-enter", null);
  });
  window.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) emitLocally("tauri://drag-leave", null);
  });
  window.addEventListener("dragover", (e) => {
    if (carriesFiles(e)) e.preventDefault();
  });
  window.addEventListener("drop", async (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    depth = 0;
    const entries = [...(e.dataTransfer?.items ?? [])].map((i) => i.webkitGetAsEntry()).filter((x): x is FileSystemEntry => !!x);
    const walked: { entry: FileSystemFileEntry; path: string; inFolder: boolean }[] = [];
    try {
      for (const entry of entries) await walk(entry, walked);
    } catch {
      // A folder that cannot be read is left out; the rest are checked.
    }
    // Files dropped themselves stay (and are checked); of those found in folders, the reads.
    const inFolders = await sequenceFiles(walked.filter((w) => w.inFolder), (w) => w.path).catch(() => walked.filter((w) => w.inFolder));
    const chosen = [...walked.filter((w) => !w.inFolder), ...inFolders].slice(0, MAX_FILES + 1);
    const found: { file: File; path: string }[] = [];
    for (const w of chosen) {
      try {
        found.push({ file: await new Promise<File>((resolve, reject) => w.entry.file(resolve, reject)), path: w.path });
      } catch {
        // A file that cannot be read is left out; the rest are checked.
      }
    }
    emitLocally("tauri://drag-drop", { paths: register(found) });
  });
}

// ---- Runs on many samples ----

/** Follows a run on many samples, asking the service how it stands (the desktop's shell follows
 *  it and sends its changes), until its last analysis ends or the page goes. */
async function follow(run: BatchRun) {
  let wait = 1000;
  let now = run;
  while (now.items.some((i) => i.state === "running")) {
    await sleep(wait);
    try {
      const next = await serviceCommand<BatchRun>("batch_progress", { run: now });
      if (JSON.stringify(next) !== JSON.stringify(now)) {
        now = next;
        emitLocally("batch-changed", now);
        wait = 1000;
      } else {
        wait = Math.min(wait * 1.5, 5000);
      }
    } catch {
      wait = 5000;
    }
  }
}

/** Installs the page's side of the commands and events for a browser. */
export function installBrowserShell() {
  if (pickers.size > 0) return;
  for (const kind of ["files", "folder", "documents"] as const) picker(kind);
  listenForDrops();
  provideLocally({
    check_files: async (a) => checkFiles(a.paths as string[]),
    pick_files: async (a) => pick(a.folder ? "folder" : "files"),
    pick_documents: async () => pick("documents"),
    start_uploads: async (a) => {
      const batch = a.batch as UploadBatch;
      for (const f of batch.files) void uploadSample(f.id, f, batch);
    },
    cancel_upload: async (a) => cancelRun(a.id as string),
    upload_documents: async (a) => {
      for (const f of a.files as DocumentFile[]) void uploadDocument(f);
    },
    cancel_document_transfer: async (a) => cancelRun(a.id as string),
    run_job_on_samples: async (a) => {
      const run = await serviceCommand<BatchRun>("run_job_on_samples", a);
      void follow(run);
      return run;
    },
  });
}
