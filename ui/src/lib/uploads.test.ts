import { describe, expect, it } from "vitest";
import {
  addChecked,
  applyProgress,
  fraction,
  parseTags,
  ready,
  retry,
  speed,
  summary,
  timeLeft,
  type FileCheck,
} from "./uploads";

const check = (path: string, problem: string | null = null): FileCheck => ({
  path,
  name: path,
  size: 1000,
  format: "FASTQ",
  compression: "gzip",
  reads: 10,
  bases: 1000,
  mean_length: 100,
  pairing: "single-end reads",
  mate: null,
  problem,
});

let n = 0;
const ids = () => `id${++n}`;

describe("upload queue", () => {
  it("bad files are kept with their explanation and never sent", () => {
    const items = addChecked([], [check("a.fq"), check("b.txt", "B is not a FASTA or FASTQ file.")], ids);
    expect(items.map((i) => i.state)).toEqual(["checked", "invalid"]);
    expect(ready(items).map((i) => i.check.path)).toEqual(["a.fq"]);
    expect(summary(items).invalid).toBe(1);
  });
  it("a file being sent is not queued twice", () => {
    let items = addChecked([], [check("a.fq")], ids);
    items = addChecked(items, [check("a.fq")], ids);
    expect(items.length).toBe(1);
  });
  it("progress gives speed and time left, done fills the bar", () => {
    let items = addChecked([], [check("a.fq")], ids);
    const id = items[0].id;
    const ev = (sent: number, state: "sending" | "done" = "sending") =>
      ({ id, state, sent, total: 1000, sample_id: state === "done" ? "s1" : null, error: null });
    items = applyProgress(items, ev(0), 0);
    expect(speed(items[0])).toBeNull();
    items = applyProgress(items, ev(200), 1000);
    expect(speed(items[0])).toBe(200);
    expect(timeLeft(items[0])).toBe(4);
    expect(fraction(items[0])).toBeCloseTo(0.2);
    items = applyProgress(items, ev(1000, "done"), 2000);
    expect(items[0].sampleId).toBe("s1");
    expect(fraction(items[0])).toBe(1);
  });
  it("a failure can be retried", () => {
    let items = addChecked([], [check("a.fq")], ids);
    const id = items[0].id;
    items = applyProgress(items, { id, state: "failed", sent: 0, total: 1000, sample_id: null, error: "Could not reach the service." });
    expect(items[0].error).toContain("reach");
    expect(ready(items).length).toBe(0);
    items = retry(items, id);
    expect(items[0].state).toBe("checked");
    expect(ready(items).length).toBe(1);
  });
  it("tags are split on commas", () => {
    expect(parseTags(" run42, lab A ,,run42")).toEqual(["run42", "lab A"]);
  });
});
