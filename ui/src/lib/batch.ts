// A job run on many selected samples: how far it has got, in numbers and words, and the list of
// runs the window shows (newest first; a new state of a run replaces the old).
import type { BatchRun } from "./bindings";
import { plural } from "./format";

export type { BatchRun };

export interface BatchSummary {
  total: number;
  running: number;
  complete: number;
  failed: number;
  /** Ended (complete or failed) over all, 0..1. */
  fraction: number;
  done: boolean;
}

export function summarize(run: BatchRun): BatchSummary {
  const count = (s: string) => run.items.filter((i) => i.state === s).length;
  const total = run.items.length;
  const [running, complete, failed] = [count("running"), count("complete"), count("failed")];
  return { total, running, complete, failed, fraction: total ? (complete + failed) / total : 1, done: running === 0 };
}

/** "Panel on 3 samples: 1 complete, 2 running." */
export function batchText(run: BatchRun): string {
  const s = summarize(run);
  const parts = [
    s.complete ? `${s.complete} complete` : "",
    s.running ? `${s.running} running` : "",
    s.failed ? `${s.failed} failed` : "",
  ].filter(Boolean);
  return `${run.job_name} on ${plural(s.total, "sample")}: ${parts.join(", ")}.`;
}

/** The runs with `run` put in (replacing an older state of it), newest first. */
export function upsertRun(runs: BatchRun[], run: BatchRun): BatchRun[] {
  const i = runs.findIndex((r) => r.id === run.id);
  if (i < 0) return [run, ...runs];
  return runs.map((r) => (r.id === run.id ? run : r));
}

let counter = 0;
export function newRunId(): string {
  counter += 1;
  return `r${Date.now().toString(36)}${counter}`;
}
