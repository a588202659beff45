// The "Watched folders" screen's logic: what the watcher's queue says, in words, grouped the way
// a lab thinks of it (folder, then run, then sample).
import type { FileState, FolderView, Layout, Live, NewFolder, RunRecord, WatchedSample, WatchView } from "./bindings";

import { formatBytes, formatDuration, formatSpeed } from "./format";

export type { Counts, FileState, FolderView, Layout, Live, NewFolder, RunRecord, WatchedSample, WatchView } from "./bindings";

/** The add/change form: a `NewFolder` with every field filled in. */
export type FolderForm = Required<NewFolder>;

export const LAYOUTS: { value: Layout; label: string; hint: string }[] = [
  { value: "auto", label: "Recognise runs", hint: "Illumina and Nanopore run folders are recognised; any other FASTQ/FASTA file is one sample." },
  { value: "illumina", label: "Illumina runs", hint: "Only Illumina run folders (with RunInfo.xml); samples named from the sample sheet." },
  { value: "nanopore", label: "Nanopore (MinKNOW) output", hint: "Only MinKNOW output: fastq_pass, barcode folders, the final summary." },
  { value: "files", label: "Plain files", hint: "Every finished FASTQ/FASTA file is one sample, as soon as it stops changing." },
];

export function newFolder(path = ""): FolderForm {
  return {
    path,
    layout: "auto",
    recursive: true,
    include: [],
    exclude: [],
    project: null,
    tags: [],
    metadata: {},
    jobs: [],
    pair: true,
    join_lanes: true,
    per_file: false,
    alerts: [],
  };
}

/** The form's free-text fields, as typed. */
export interface FolderTexts {
  tags: string;
  include: string;
  exclude: string;
  metadata: string;
  /** The folder's own taxon alert rules, one per line. */
  alerts: string;
}

/** A saved folder's settings, to change them in the form. */
export function folderToForm(f: FolderView): { form: FolderForm; texts: FolderTexts } {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(f.metadata ?? {})) metadata[k] = typeof v === "string" ? v : JSON.stringify(v);
  return {
    form: {
      path: f.path,
      layout: f.layout,
      recursive: f.recursive,
      include: [...f.include],
      exclude: [...f.exclude],
      project: f.project,
      tags: [...f.tags],
      metadata,
      jobs: [...f.jobs],
      pair: f.illumina.pair,
      join_lanes: f.illumina.join_lanes,
      per_file: f.nanopore === "per_file",
      alerts: [...(f.alerts ?? [])],
    },
    texts: {
      tags: f.tags.join(", "),
      include: f.include.join(", "),
      exclude: f.exclude.join(", "),
      metadata: Object.entries(metadata)
        .map(([k, v]) => `${k} = ${v}`)
        .join("\n"),
      alerts: (f.alerts ?? []).join("\n"),
    },
  };
}

/**
 * Glob patterns typed as a comma-separated list. A comma inside braces belongs to the pattern
 * (`*.{fastq,fq}.gz` is one pattern).
 */
export function parsePatterns(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "{") depth++;
    else if (ch === "}") depth = Math.max(0, depth - 1);
    if ((ch === "," && depth === 0) || ch === "\n") {
      out.push(current);
      current = "";
    } else current += ch;
  }
  out.push(current);
  return [...new Set(out.map((p) => p.trim()).filter((p) => p !== ""))];
}

/**
 * Metadata typed one `key = value` per line (blank lines ignored). A line without `=` or with
 * no key is refused by its number, so nothing is saved half-read.
 */
export function parseMetadata(text: string): { metadata: Record<string, string> } | { error: string } {
  const metadata: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    const eq = line.indexOf("=");
    const key = eq < 0 ? "" : line.slice(0, eq).trim();
    if (key === "") return { error: `Metadata line ${i + 1} (“${line}”) is not “key = value”.` };
    metadata[key] = line.slice(eq + 1).trim();
  }
  return { metadata };
}

/** Alert rules typed one per line (`Salmonella enterica >= 0.1%`), blank lines left out; the
 *  service side checks each rule and names one it cannot read. */
export function parseRules(text: string): string[] {
  return [...new Set(text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== ""))];
}

/** The upload speed limits offered (bytes per second; null: none). */
export const UPLOAD_LIMITS: (number | null)[] = [null, 1e6, 2e6, 5e6, 10e6, 20e6, 50e6, 100e6];

/** An upload speed limit in words. */
export function limitLabel(limit: number | null): string {
  if (!limit) return "No upload limit";
  const mb = limit / 1e6;
  return mb >= 1 ? `At most ${Number(mb.toFixed(1))} MB/s` : `At most ${Math.round(limit / 1e3)} kB/s`;
}

export type Tone = "ok" | "busy" | "wait" | "bad";

/** A sample's state in words, with a tone for its badge. */
export function sampleStatus(s: WatchedSample): { text: string; tone: Tone } {
  switch (s.state) {
    case "confirmed":
      return { text: "Uploaded", tone: "ok" };
    case "failed":
      return { text: `Failed: ${s.error ?? "unknown error"}. It is tried again at the next start.`, tone: "bad" };
    case "uploading":
      if (s.live && s.live.total > 0) {
        const pct = Math.min(100, Math.floor((100 * s.live.sent) / s.live.total));
        const parts = [`Uploading ${pct}%`, `${formatBytes(s.live.sent)} of ${formatBytes(s.live.total)}`];
        if (s.live.rate > 0) {
          parts.push(formatSpeed(s.live.rate));
          parts.push(`${formatDuration((s.live.total - s.live.sent) / s.live.rate)} left`);
        }
        return { text: parts.join(" · "), tone: "busy" };
      }
      if (s.error) return { text: `Retrying after: ${s.error}`, tone: "wait" };
      return { text: "Waiting to upload", tone: "wait" };
    case "settled":
      return { text: "Ready", tone: "wait" };
    default:
      return { text: "Waiting for the files to finish", tone: "wait" };
  }
}

/** A file's state in words. */
export const FILE_STATE: Record<FileState, string> = {
  seen: "Still being written",
  settled: "Complete; waiting for its run",
  uploading: "Uploading",
  confirmed: "Uploaded",
  failed: "Failed",
};

/** A run's state in words. */
export function runStatus(r: RunRecord): { text: string; tone: Tone } {
  switch (r.state) {
    case "uploaded":
      return { text: "Uploaded", tone: "ok" };
    case "complete":
      return { text: "Complete; uploading its samples", tone: "busy" };
    case "failed":
      return { text: `Failed on the instrument${r.detail ? `: ${r.detail}` : ""}; not uploaded`, tone: "bad" };
    default:
      return { text: r.detail ? `Waiting for ${r.detail}` : "Sequencing", tone: "wait" };
  }
}

export interface RunGroup {
  /** The run, or null for samples made of loose files. */
  run: RunRecord | null;
  samples: WatchedSample[];
}

/** A folder's runs with their samples; loose files last. `view.samples` is newest first. */
export function groupFolder(view: WatchView, folder: string): RunGroup[] {
  const runs = view.runs.filter((r) => r.folder === folder);
  const groups: RunGroup[] = runs.map((run) => ({ run, samples: [] }));
  const byPath = new Map(groups.map((g) => [g.run!.path, g]));
  const loose: RunGroup = { run: null, samples: [] };
  for (const s of view.samples) {
    if (s.folder !== folder) continue;
    const g = (s.run && byPath.get(s.run)) || loose;
    g.samples.push(s);
  }
  // A run's samples in the order they were made (the sample sheet's), loose files newest first.
  for (const g of groups) g.samples.reverse();
  return loose.samples.length ? [...groups, loose] : groups;
}

/** Applies a progress event to the view's samples without reloading it. */
export function applyWatchProgress(view: WatchView, key: string, live: Live): WatchView {
  return {
    ...view,
    samples: view.samples.map((s) => (s.key === key ? { ...s, state: "uploading", live } : s)),
  };
}

/** The folder's settings in one line. */
export function folderSummary(f: FolderView): string {
  const parts = [LAYOUTS.find((l) => l.value === f.layout)?.label ?? f.layout];
  if (!f.recursive) parts.push("this folder only");
  if (f.layout === "auto" || f.layout === "illumina") {
    parts.push(f.illumina.pair ? "R1/R2 as one sample" : "R1 and R2 apart");
    if (!f.illumina.join_lanes) parts.push("one sample per lane");
  }
  if ((f.layout === "auto" || f.layout === "nanopore") && f.nanopore === "per_file") parts.push("Nanopore: one sample per file");
  if (f.tags.length) parts.push(`tags ${f.tags.join(", ")}`);
  if (f.include.length) parts.push(`only ${f.include.join(", ")}`);
  if (f.exclude.length) parts.push(`not ${f.exclude.join(", ")}`);
  const meta = Object.entries(f.metadata ?? {});
  if (meta.length) parts.push(`metadata ${meta.map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ")}`);
  return parts.join(" · ");
}

/** The watcher's overall state in words. */
export function watcherStatus(v: WatchView): { text: string; tone: Tone } {
  if (v.folders.length === 0) return { text: "No folder is watched yet", tone: "wait" };
  if (v.problem) return { text: v.problem, tone: "bad" };
  if (!v.running) return { text: "Not watching", tone: "wait" };
  const watched = v.folders.filter((f) => !f.missing).length;
  const n = `${watched} folder${watched === 1 ? "" : "s"}`;
  if (v.paused) return { text: `Uploads paused; still watching ${n}`, tone: "wait" };
  return { text: `Watching ${n}`, tone: "ok" };
}
