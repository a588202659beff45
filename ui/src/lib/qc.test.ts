import { describe, expect, it } from "vitest";
import { failedFirst, qcFileName, qcSummary, type QcRow, type ReadQc } from "./qc";

const qc = (over: Partial<ReadQc> = {}): ReadQc => ({
  reads: 12000,
  pairs: 6000,
  bases: 1800000,
  min_length: 150,
  max_length: 150,
  mean_length: 150,
  median_length: 150,
  n50: 150,
  long_reads: false,
  gc: 0.5123,
  n_share: 0,
  mean_quality: 35.25,
  q30_share: 0.9,
  lengths: [],
  lengths_log_scale: false,
  quality_by_position: [],
  read_quality: [],
  gc_content: [],
  failures: [],
  ...over,
});

describe("quality control", () => {
  it("names its files after the sample", () => {
    expect(qcFileName("gut day 1.fastq.gz", "png")).toBe("gut_day_1_qc.png");
    expect(qcFileName("x.fa", "positions")).toBe("x_quality_by_position.csv");
    expect(qcFileName("", "csv")).toBe("sample_qc.csv");
  });

  it("sums up short and long reads", () => {
    expect(qcSummary(qc())).toBe("12,000 reads (6,000 pairs) · 1,800,000 bases · median length 150 · mean Q35.3 · GC 51.2%");
    const long = qcSummary(qc({ pairs: 0, long_reads: true, n50: 12345, mean_quality: null, n_share: 0.012 }));
    expect(long).toBe("12,000 reads · 1,800,000 bases · N50 12,345 · no qualities (FASTA) · GC 51.2% · N 1.20%");
  });

  it("puts failed samples first", () => {
    const row = (id: string, q: ReadQc | null): QcRow => ({ id, name: id, qc: q, why: q ? null : "none" });
    const rows = [row("a", qc()), row("b", null), row("c", qc({ failures: ["x"] })), row("d", qc({ failures: ["y"] }))];
    expect(failedFirst(rows).map((r) => r.id)).toEqual(["c", "d", "b", "a"]);
  });
});
