import { describe, expect, it } from "vitest";
import { batchText, summarize, upsertRun, type BatchRun } from "./batch";

const item = (sample: string, state: "running" | "complete" | "failed") => ({
  sample,
  sample_name: `${sample}.fastq.gz`,
  analysis: `a-${sample}`,
  state,
  error: state === "failed" ? "the sample has no file yet" : null,
});
const run = (id: string, states: ("running" | "complete" | "failed")[]): BatchRun => ({
  id,
  job: "j",
  job_name: "Panel (demo AMR)",
  items: states.map((s, i) => item(`s${i}`, s)),
});

describe("a job run on many samples", () => {
  it("counts what has ended", () => {
    expect(summarize(run("b", ["running", "complete", "failed"]))).toEqual({
      total: 3,
      running: 1,
      complete: 1,
      failed: 1,
      fraction: 2 / 3,
      done: false,
    });
    expect(summarize(run("b", ["complete", "complete"])).done).toBe(true);
  });
  it("says how far it got", () => {
    expect(batchText(run("b", ["running", "running", "complete"]))).toBe("Panel (demo AMR) on 3 samples: 1 complete, 2 running.");
    expect(batchText(run("b", ["complete", "failed"]))).toBe("Panel (demo AMR) on 2 samples: 1 complete, 1 failed.");
  });
  it("puts a new run first and replaces an older state of a known one", () => {
    const a = run("a", ["running"]);
    const b = run("b", ["running"]);
    let runs = upsertRun(upsertRun([], a), b);
    expect(runs.map((r) => r.id)).toEqual(["b", "a"]);
    runs = upsertRun(runs, run("a", ["complete"]));
    expect(runs.map((r) => [r.id, r.items[0].state])).toEqual([["b", "running"], ["a", "complete"]]);
  });
});
