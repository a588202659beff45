// The upload queue: files checked, then sent, with progress events from the shell. Pure
// functions over a list of items; speed and time left from recent progress samples.
import type { FileCheck, UploadFile, UploadProgress, UploadState as SendState } from "./bindings";

export type { FileCheck, UploadProgress };

/** Before it is sent an item is checked, invalid, or read 2 joined to its read 1; then the shell says. */
export type UploadState = "checked" | "invalid" | "joined" | SendState;

/** Being sent, or about to be: the shell has it (it can be cancelled). */
export function isActive(state: UploadState): boolean {
  return state === "waiting" || state === "joining" || state === "sending" || state === "retrying";
}

export interface UploadItem {
  id: string;
  check: FileCheck;
  state: UploadState;
  sent: number;
  total: number;
  sampleId: string | null;
  error: string | null;
  /** Recent (time ms, bytes sent) samples for the speed estimate. */
  samples: [number, number][];
  /** Whether it is included in the next "Upload" (invalid files never are). */
  include: boolean;
  /** Read 1 of a joined pair: the id of its read 2 item (which is then `joined`). */
  joinWith: string | null;
}

let counter = 0;
export function newId(): string {
  counter += 1;
  return `u${Date.now().toString(36)}${counter}`;
}

/** Adds checked files; a file already queued and not finished is not added twice. */
export function addChecked(items: UploadItem[], checks: FileCheck[], makeId = newId): UploadItem[] {
  const busy = new Set(items.filter((i) => i.state !== "done" && i.state !== "cancelled").map((i) => i.check.path));
  const added = checks
    .filter((c) => !busy.has(c.path))
    .map<UploadItem>((c) => ({
      id: makeId(),
      check: c,
      state: c.problem ? "invalid" : "checked",
      sent: 0,
      total: c.size,
      sampleId: null,
      error: null,
      samples: [],
      include: !c.problem,
      joinWith: null,
    }));
  return [...items, ...added];
}

const WINDOW_MS = 5000;

/** Applies one progress event from the shell. */
export function applyProgress(items: UploadItem[], e: UploadProgress, now = Date.now()): UploadItem[] {
  return items.map((i) => {
    if (i.id !== e.id) return i;
    const samples: [number, number][] =
      e.state === "sending" ? [...i.samples.filter(([t]) => now - t <= WINDOW_MS), [now, e.sent]] : [];
    return {
      ...i,
      state: e.state,
      sent: e.state === "done" ? e.total : e.sent,
      total: e.total || i.total,
      sampleId: e.sample_id ?? i.sampleId,
      error: e.error,
      samples,
    };
  });
}

/** Bytes per second over the recent samples; null until there are two. */
export function speed(item: UploadItem): number | null {
  const s = item.samples;
  if (s.length < 2) return null;
  const [t0, b0] = s[0];
  const [t1, b1] = s[s.length - 1];
  if (t1 <= t0 || b1 <= b0) return null;
  return ((b1 - b0) * 1000) / (t1 - t0);
}

/** Seconds left at the current speed; null when unknown. */
export function timeLeft(item: UploadItem): number | null {
  const v = speed(item);
  if (v == null) return null;
  return Math.max(0, item.total - item.sent) / v;
}

export function fraction(item: UploadItem): number {
  if (item.state === "done") return 1;
  return item.total > 0 ? Math.min(1, item.sent / item.total) : 0;
}

/** The items the "Upload" button sends: included, checked (or failed/cancelled, to retry). */
export function ready(items: UploadItem[]): UploadItem[] {
  return items.filter((i) => i.include && (i.state === "checked"));
}

/** Puts a failed or cancelled upload back to be sent again (it is re-read from the start). */
export function retry(items: UploadItem[], id: string): UploadItem[] {
  return items.map((i) =>
    i.id === id && (i.state === "failed" || i.state === "cancelled")
      ? { ...i, state: "checked", sent: 0, error: null, samples: [], include: true }
      : i,
  );
}

export function markWaiting(items: UploadItem[], ids: string[]): UploadItem[] {
  const set = new Set(ids);
  return items.map((i) => (set.has(i.id) ? { ...i, state: "waiting" as const, sent: 0, error: null } : i));
}

export function removeFinished(items: UploadItem[]): UploadItem[] {
  const finished = (i: UploadItem) => i.state === "done" || i.state === "invalid" || i.state === "cancelled";
  const kept = items.filter((i) => !finished(i));
  // Read 2 of a joined pair goes with its read 1.
  return kept.filter((i) => i.state !== "joined" || kept.some((c) => c.joinWith === i.id));
}

export function summary(items: UploadItem[]): { active: number; done: number; failed: number; invalid: number } {
  return {
    active: items.filter((i) => isActive(i.state)).length,
    done: items.filter((i) => i.state === "done").length,
    failed: items.filter((i) => i.state === "failed").length,
    invalid: items.filter((i) => i.state === "invalid").length,
  };
}

/** The checked item this one's suggested mate is, if both are waiting to be sent. */
export function mateOf(items: UploadItem[], item: UploadItem): UploadItem | null {
  if (!item.check.mate || item.state !== "checked") return null;
  return items.find((m) => m.check.path === item.check.mate && m.state === "checked" && m.check.mate === item.check.path) ?? null;
}

/** Whether a check found read 2 of a pair by the file's reads. */
const readsSayRead2 = (i: UploadItem) => (i.check.pairing ?? "").startsWith("read 2");

/** Joins a suggested pair into one sample: read 1 carries the upload (the file whose reads say
 * read 1, else the first by name: `_R1`/`_1` sort before `_R2`/`_2`), read 2 waits beside it as
 * `joined`. */
export function joinPair(items: UploadItem[], id: string): UploadItem[] {
  const item = items.find((i) => i.id === id);
  const mate = item && mateOf(items, item);
  if (!item || !mate) return items;
  const byReads = readsSayRead2(item) !== readsSayRead2(mate);
  const itemFirst = byReads ? readsSayRead2(mate) : item.check.name <= mate.check.name;
  const [r1, r2] = itemFirst ? [item, mate] : [mate, item];
  return items.map((i) =>
    i.id === r1.id ? { ...i, joinWith: r2.id, include: true } : i.id === r2.id ? { ...i, state: "joined" as const, include: false } : i,
  );
}

/** Undoes [`joinPair`]: both files go back to being their own samples. */
export function splitPair(items: UploadItem[], id: string): UploadItem[] {
  const r1 = items.find((i) => i.joinWith !== null && (i.id === id || i.joinWith === id));
  if (!r1 || !r1.joinWith || r1.state !== "checked") return items;
  const r2 = r1.joinWith;
  return items.map((i) =>
    i.id === r1.id ? { ...i, joinWith: null } : i.id === r2 ? { ...i, state: "checked" as const, include: true } : i,
  );
}

/** What the shell is sent for the items to upload: read 2's path beside read 1 for a joined pair. */
export function uploadFiles(items: UploadItem[], list: UploadItem[]): UploadFile[] {
  return list.map((i) => ({
    id: i.id,
    path: i.check.path,
    mate: i.joinWith ? (items.find((m) => m.id === i.joinWith)?.check.path ?? null) : null,
  }));
}

/** Splits a comma-separated tag field into tag names. */
export function parseTags(text: string): string[] {
  return [...new Set(text.split(",").map((t) => t.trim()).filter((t) => t !== ""))];
}
