import { describe, expect, it } from "vitest";
import {
  addChecked,
  joinPair,
  removeFinished,
  splitPair,
  uploadFiles,
  applyProgress,
  fraction,
  isActive,
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
  it("an upload being retried stays active, says why, and goes on", () => {
    let items = addChecked([], [check("a.fq")], ids);
    const id = items[0].id;
    const ev = (state: "sending" | "retrying", sent: number, error: string | null = null) =>
      ({ id, state, sent, total: 1000, sample_id: null, error });
    items = applyProgress(items, ev("sending", 400), 0);
    items = applyProgress(items, ev("retrying", 0, "The service is busy. Trying again in 4 s."), 1000);
    expect(items[0].state).toBe("retrying");
    expect(items[0].error).toBe("The service is busy. Trying again in 4 s.");
    expect(isActive(items[0].state)).toBe(true);
    expect(summary(items)).toEqual({ active: 1, done: 0, failed: 0, invalid: 0 });
    // Still the shell's: not sent again, not offered to retry by hand, not cleared as finished.
    expect(ready(items)).toEqual([]);
    expect(retry(items, id)).toEqual(items);
    expect(removeFinished(items)).toEqual(items);
    expect(addChecked(items, [check("a.fq")], ids)).toHaveLength(1);
    items = applyProgress(items, ev("sending", 100), 5000);
    expect(items[0].state).toBe("sending");
    expect(items[0].error).toBeNull();
  });
  it("tags are split on commas", () => {
    expect(parseTags(" run42, lab A ,,run42")).toEqual(["run42", "lab A"]);
  });
});

describe("read pairs", () => {
  const pair = (): ReturnType<typeof addChecked> => {
    const r1 = { ...check("/d/s_R1_001.fq"), name: "s_R1_001.fq", mate: "/d/s_R2_001.fq" };
    const r2 = { ...check("/d/s_R2_001.fq"), name: "s_R2_001.fq", mate: "/d/s_R1_001.fq" };
    return addChecked([], [r2, r1], ids);
  };
  it("joins a pair into one upload carried by read 1, whichever was clicked", () => {
    const items = pair();
    const joined = joinPair(items, items[0].id); // read 2 clicked
    const r1 = joined.find((i) => i.check.name === "s_R1_001.fq")!;
    const r2 = joined.find((i) => i.check.name === "s_R2_001.fq")!;
    expect(r1.joinWith).toBe(r2.id);
    expect(r2.state).toBe("joined");
    expect(ready(joined).map((i) => i.id)).toEqual([r1.id]);
    expect(uploadFiles(joined, ready(joined))).toEqual([{ id: r1.id, path: "/d/s_R1_001.fq", mate: "/d/s_R2_001.fq" }]);
  });
  it("puts the file whose reads say read 1 first, whatever the names", () => {
    const a = { ...check("/d/b.fq"), name: "b.fq", mate: "/d/a.fq", pairing: "read 1 of a pair" };
    const b = { ...check("/d/a.fq"), name: "a.fq", mate: "/d/b.fq", pairing: "read 2 of a pair" };
    const items = addChecked([], [a, b], ids);
    const joined = joinPair(items, items[1].id);
    expect(uploadFiles(joined, ready(joined))).toEqual([{ id: items[0].id, path: "/d/b.fq", mate: "/d/a.fq" }]);
  });
  it("splits a joined pair back into two samples", () => {
    const items = pair();
    expect(joinPair(items, "nope")).toBe(items);
    const j = joinPair(items, items[1].id);
    expect(j.some((i) => i.joinWith !== null)).toBe(true);
    const split = splitPair(j, j[0].id);
    expect(split.every((i) => i.state === "checked" && i.joinWith === null)).toBe(true);
    expect(uploadFiles(split, ready(split)).every((f) => f.mate === null)).toBe(true);
  });
  it("clears read 2 of a joined pair once its upload is done", () => {
    const items = pair();
    const joined = joinPair(items, items[0].id);
    expect(removeFinished(joined).length).toBe(2);
    const r1 = joined.find((i) => i.joinWith !== null)!;
    const done = joined.map((i) => (i.id === r1.id ? { ...i, state: "done" as const } : i));
    expect(removeFinished(done)).toEqual([]);
  });
  it("does not join a file whose mate is not in the list", () => {
    const lone = addChecked([], [{ ...check("/d/a_R1.fq"), mate: "/d/a_R2.fq" }], ids);
    expect(joinPair(lone, lone[0].id)).toBe(lone);
  });
});
