// The upload queue: files checked, then sent, with progress events from the shell. Pure
// functions over a list of items; speed and time left from recent progress samples.

export interface FileCheck {
  path: string;
  name: string;
  size: number;
  format: string | null;
  compression: string | null;
  reads: number;
  bases: number;
  mean_length: number;
  pairing: string | null;
  mate: string | null;
  problem: string | null;
}

export type UploadState = "checked" | "invalid" | "waiting" | "sending" | "done" | "failed" | "cancelled";

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
}

export interface ProgressEvent {
  id: string;
  state: "waiting" | "sending" | "done" | "failed" | "cancelled";
  sent: number;
  total: number;
  sample_id: string | null;
  error: string | null;
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
    }));
  return [...items, ...added];
}

const WINDOW_MS = 5000;

/** Applies one progress event from the shell. */
export function applyProgress(items: UploadItem[], e: ProgressEvent, now = Date.now()): UploadItem[] {
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
  return items.filter((i) => i.state !== "done" && i.state !== "invalid" && i.state !== "cancelled");
}

export function summary(items: UploadItem[]): { active: number; done: number; failed: number; invalid: number } {
  return {
    active: items.filter((i) => i.state === "waiting" || i.state === "sending").length,
    done: items.filter((i) => i.state === "done").length,
    failed: items.filter((i) => i.state === "failed").length,
    invalid: items.filter((i) => i.state === "invalid").length,
  };
}

/** Splits a comma-separated tag field into tag names. */
export function parseTags(text: string): string[] {
  return [...new Set(text.split(",").map((t) => t.trim()).filter((t) => t !== ""))];
}
