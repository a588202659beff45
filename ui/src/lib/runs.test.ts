import { describe, expect, it } from "vitest";
import { alertText, chartLines, groupCounts, niceMax, runState, runTotals, type LiveGroup, type LiveRun } from "./runs";

const group = (over: Partial<LiveGroup> = {}): LiveGroup => ({
  name: "barcode07",
  batches: 3,
  uploaded: 3,
  upload_failed: 0,
  classified: 2,
  classification_failed: 1,
  reads: 2000,
  taxa: [
    { tax_id: "562", name: "Escherichia coli", rank: "species", reads: 1200 },
    { tax_id: "28901", name: "Salmonella enterica", rank: "species", reads: 30 },
  ],
  colours: ["#0072B2", "#E69F00"],
  series: [
    { at: "2026-11-26T10:00:00Z", batches: 1, reads: 1000, percent: [40, 1] },
    { at: "2026-11-26T10:05:00Z", batches: 2, reads: 2000, percent: [60, 1.5] },
  ],
  alerts: [],
  sample_ids: ["s1", "s2", "s3"],
  ...over,
});

const run = (over: Partial<LiveRun> = {}): LiveRun => ({
  path: "/runs/r1",
  run_id: "r1",
  kind: "nanopore",
  state: "waiting",
  detail: null,
  finished: false,
  updated_at: null,
  groups: [group(), group({ name: "barcode08", batches: 1, uploaded: 0, upload_failed: 1, classified: 0, classification_failed: 0, reads: 0 })],
  ...over,
});

describe("the run dashboard", () => {
  it("says where a run is", () => {
    expect(runState(run())).toEqual({ text: "Sequencing", tone: "busy" });
    expect(runState(run({ detail: "sequencing (no final_summary_*.txt yet)" })).text).toBe("Sequencing (no final_summary_*.txt yet)");
    expect(runState(run({ state: "uploaded", finished: true })).tone).toBe("ok");
    expect(runState(run({ state: "failed", detail: "the final summary says the run was stopped" })).text).toBe(
      "Failed: the final summary says the run was stopped",
    );
  });
  it("counts a barcode's batches and the run's", () => {
    expect(groupCounts(group())).toBe("3 batches: 3 uploaded, 2 classified, 1 failed");
    expect(groupCounts(group({ batches: 1, classified: 1, classification_failed: 0, uploaded: 1 }))).toBe("1 batch: 1 uploaded, 1 classified");
    expect(runTotals(run())).toEqual({ batches: 4, classified: 2, failed: 2, reads: 2000, alerts: 0 });
  });
  it("draws each taxon's share as it grew, batch by batch", () => {
    const c = chartLines(group(), 200, 100);
    expect(c.xMax).toBe(2);
    expect(c.yMax).toBe(100);
    expect(c.lines.map((l) => l.taxon)).toEqual(["Escherichia coli", "Salmonella enterica"]);
    // Each taxon in the colour the service gave it (grey where it gave none).
    expect(c.lines.map((l) => l.colour)).toEqual(["#0072B2", "#E69F00"]);
    expect(chartLines(group({ colours: [] }), 200, 100).lines[1].colour).toBe("#A6A6A6");
    // x: batches over 2 batches; y: 40% and 60% of a 100% axis, 100 px high.
    expect(c.lines[0].points).toBe("100,60 200,40");
    expect(c.lines[0].dots).toEqual([
      [100, 60],
      [200, 40],
    ]);
    expect(c.lines[0].last).toBe(60);
    // One batch so far: a flat line from the left edge.
    const one = chartLines(group({ series: [group().series[0]] }), 200, 100);
    expect(one.lines[0].points).toBe("0,20 200,20");
    expect(one.yMax).toBe(50);
  });
  it("rounds the axis up to a readable top", () => {
    expect([0.3, 1, 1.2, 7, 24, 51].map(niceMax)).toEqual([1, 1, 2, 10, 25, 100]);
  });
  it("words an alert", () => {
    expect(
      alertText({
        subject: "run:r1/barcode07",
        label: "r1 barcode07",
        sample_id: null,
        run_id: "r1",
        rule: "Salmonella enterica >= 0.1%",
        tax_id: "28901",
        taxon: "Salmonella enterica",
        reads: 1234,
        percent: 0.2468,
        at: "2026-11-26T10:05:00Z",
      }),
    ).toBe("r1 barcode07: Salmonella enterica at 1,234 reads, 0.247% of all reads (rule: Salmonella enterica >= 0.1%)");
  });
});
