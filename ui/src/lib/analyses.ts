// The Analyses screen: its table state (paging, sorting, filters), durations, and a failed
// analysis's message turned into what a scientist can do about it.
import type { AnalysisQuery, AnalysisState } from "./bindings";
import { formatDuration } from "./format";
import { pageCount } from "./table";

export type { AnalysesPage, AnalysisListRow, AnalysisState, BatchItem, BatchRun } from "./bindings";

export type AnalysisSort = "created_at" | "updated_at" | "kind" | "status";

export interface AnalysesTable {
  page: number;
  perPage: number;
  sort: AnalysisSort;
  desc: boolean;
  /** "" for every status. */
  status: AnalysisState | "";
  /** A job id; "" for every job. */
  job: string;
}

export function initialAnalyses(perPage = 50): AnalysesTable {
  return { page: 1, perPage, sort: "created_at", desc: true, status: "", job: "" };
}

/** A new column sorts ascending (times newest first); the same column flips. Back to page 1. */
export function toggleAnalysisSort(t: AnalysesTable, sort: AnalysisSort): AnalysesTable {
  if (t.sort === sort) return { ...t, desc: !t.desc, page: 1 };
  return { ...t, sort, desc: sort === "created_at" || sort === "updated_at", page: 1 };
}

/** Changing a filter goes back to page 1. */
export function filterAnalyses(t: AnalysesTable, change: Partial<Pick<AnalysesTable, "status" | "job">>): AnalysesTable {
  const next = { ...t, ...change };
  return next.status === t.status && next.job === t.job ? t : { ...next, page: 1 };
}

/** Page `page`, kept between the first and the last. */
export function goToAnalysesPage(t: AnalysesTable, page: number, total: number): AnalysesTable {
  const p = Math.min(Math.max(1, Math.floor(page)), pageCount(total, t.perPage));
  return p === t.page ? t : { ...t, page: p };
}

/** The query the shell's `list_analyses` command takes. */
export function toAnalysisQuery(t: AnalysesTable): AnalysisQuery {
  return {
    page: t.page,
    per_page: t.perPage,
    sort: t.sort,
    desc: t.desc,
    status: t.status === "" ? null : t.status,
    job: t.job === "" ? null : t.job,
  };
}

/** Seconds from start to finish; null while running or when a time is unreadable. */
export function durationSeconds(started: string, finished: string | null): number | null {
  if (!finished) return null;
  const a = Date.parse(started);
  const b = Date.parse(finished);
  if (Number.isNaN(a) || Number.isNaN(b) || b < a) return null;
  return (b - a) / 1000;
}

/** A duration as the table shows it: "under 1 s", "45 s", "3 min 20 s"; "—" while running. */
export function durationText(seconds: number | null): string {
  if (seconds === null) return "—";
  return seconds < 1 ? "under 1 s" : formatDuration(seconds);
}

const KINDS: Record<string, string> = {
  classification: "Classification",
  panel: "Panel",
  alignment: "Alignment",
  functional_profile: "Functional profile",
  control: "Negative controls",
  report: "Report",
};

/** "functional_profile" -> "Functional profile". */
export function kindText(kind: string): string {
  return KINDS[kind] ?? kind.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}

export const STATE_TEXT: Record<AnalysisState, string> = { running: "Running", complete: "Complete", failed: "Failed" };

/** A failed analysis explained: what to do, and what the service said. */
export interface Explained {
  advice: string;
  said: string;
}

const ADVICE: [RegExp, string][] = [
  [/has no reference genome for tax id/i, "There is no reference genome for that species. Run the alignment again with one of the tax ids the message lists, or with a species from the sample's classification."],
  [/needs a tax_id/i, "An alignment needs the species to align to. Run it again and choose a species (tax id) in its settings."],
  [/longer than its time limit/i, "It ran out of time. Run it on a smaller file, or ask whoever runs the MGDS service to raise the time limit."],
  [/more memory than its ceiling/i, "It ran out of memory. Check that the file is complete and not damaged; if it is, ask whoever runs the MGDS service to raise the memory ceiling."],
  [/longer than .* the longest this service analyses/i, "One record is longer than the service analyses. Split the record, or ask whoever runs the MGDS service for a higher limit."],
  [/not a FASTA or FASTQ|is not in FASTA or FASTQ|line \d+/i, "The sample's file is not valid sequencing data at the place named. Check the file, fix or re-export it, and upload it again as a new sample."],
  [/no file yet|upload its reads/i, "The sample has no reads yet. Upload its reads, then run the analysis again."],
  [/was deleted|is gone/i, "The sample was deleted (or you lost access to it) before the analysis could run. Nothing needs doing."],
  [/stopped before finishing .* times|killed from outside/i, "The computer running it stopped it repeatedly. Run it again; if it fails again, report it with the sample."],
  [/could not be started/i, "It never started. Read why below; fix that (for example, ask the sample's owner for access) and run it again."],
];

/** What the service said about a failure, with the advice that fits it. */
export function explainError(message: string | null): Explained {
  const said = (message ?? "").trim();
  if (!said) return { advice: "The service gave no reason. Run the analysis again; if it fails again, report it with the sample.", said: "" };
  const sentence = said.charAt(0).toUpperCase() + said.slice(1) + (/[.!?]$/.test(said) ? "" : ".");
  const hit = ADVICE.find(([re]) => re.test(said));
  return {
    advice: hit ? hit[1] : "Read the service's message below, fix what it names, and run the analysis again.",
    said: sentence,
  };
}
