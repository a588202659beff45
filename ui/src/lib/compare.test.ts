import { describe, expect, it } from "vitest";
import {
  caption,
  cellAt,
  chartTarget,
  columnOf,
  initialControls,
  selectionProblem,
  skippedText,
  tablePage,
  toRequest,
  valueText,
  type ComparisonView,
} from "./compare";

const view = (over: Partial<ComparisonView> = {}): ComparisonView => ({
  svg: "<svg/>",
  samples: [
    { id: "s1", label: "control.fastq.gz" },
    { id: "s2", label: "case.fastq.gz" },
  ],
  columns: [
    { label: "Escherichia coli", tax_id: "562" },
    { label: "Other (3 taxa)", tax_id: null },
  ],
  values: [
    [61.23456, 38.76544],
    [20, 80],
  ],
  reads: [
    [612, 388],
    [200, 800],
  ],
  rank: "species",
  measure: "genome_copies",
  measures: [
    { key: "genome_copies", label: "Share of genome copies", explanation: "" },
    { key: "readcount", label: "Reads", explanation: "" },
  ],
  notes: ["host reads hidden", "unclassified reads hidden"],
  clustering: null,
  fields: ["site", "name"],
  skipped: [],
  ...over,
});

describe("the comparison's request", () => {
  it("bounds the number of taxa and drops ordering when clustering", () => {
    const c = { ...initialControls(), top: 500, orderBy: "site" };
    expect(toRequest(["a", "b"], c)).toMatchObject({ top: 50, order_by: "site", cluster: false, chart: "bars" });
    const clustered = toRequest(["a", "b"], { ...c, chart: "heatmap", cluster: true, top: 0 });
    expect(clustered).toMatchObject({ top: 1, order_by: null, cluster: true });
    // Clustering is for the heatmap only.
    expect(toRequest(["a", "b"], { ...c, cluster: true }).cluster).toBe(false);
  });
  it("says when a selection cannot be compared", () => {
    expect(selectionProblem(1)).toMatch(/at least 2/);
    expect(selectionProblem(501)).toMatch(/at most 500 samples at once \(501 chosen\)/);
    expect(selectionProblem(2)).toBeNull();
  });
});

describe("what the chart says", () => {
  it("names the sample, taxon and value of a bar or cell", () => {
    expect(cellAt(view(), 1, 0)).toEqual({
      sample: "case.fastq.gz",
      sampleId: "s2",
      taxon: "Escherichia coli",
      taxId: "562",
      value: "20.000%",
      reads: 200,
    });
    expect(cellAt(view(), 2, 0)).toBeNull();
    expect(valueText(view({ measure: "readcount" }), 1234.4)).toBe("1,234 reads");
  });
  it("finds the row and taxon of the element under the pointer", () => {
    const attrs: Record<string, string> = { "data-sample": "1", "data-tax-id": "562" };
    const rect = { getAttribute: (n: string) => attrs[n] ?? null };
    expect(chartTarget({ closest: () => rect })).toEqual({ sample: 1, taxId: "562" });
    expect(chartTarget({ closest: () => null })).toBeNull();
    expect(chartTarget({ closest: () => ({ getAttribute: () => "x" }) })).toBeNull();
    expect(columnOf(view(), "562")).toBe(0);
    expect(columnOf(view(), null)).toBe(-1);
  });
  it("captions the measure, order and what is hidden", () => {
    const c = { ...initialControls(), orderBy: "site" };
    expect(caption(view(), c)).toBe(
      "Share of genome copies at species rank · 2 samples · ordered by site · host reads hidden · unclassified reads hidden",
    );
    const clustered = view({ clustering: "Bray–Curtis dissimilarity, average linkage (UPGMA)" });
    expect(caption(clustered, c)).toContain("clustered: Bray–Curtis");
  });
  it("names the samples left out and why", () => {
    expect(skippedText(view())).toBeNull();
    const skipped = Array.from({ length: 7 }, (_, i) => ({ id: `x${i}`, name: `s${i}.fq`, why: "its classification is still running" }));
    const text = skippedText(view({ skipped }))!;
    expect(text).toMatch(/^7 samples are not in the chart: s0.fq \(its classification is still running\)/);
    expect(text).toMatch(/and 2 more\.$/);
  });
});

describe("the table view", () => {
  it("pages the samples with the chart's numbers", () => {
    const many = view({
      samples: Array.from({ length: 250 }, (_, i) => ({ id: `s${i}`, label: `S${i}` })),
      values: Array.from({ length: 250 }, () => [50, 50]),
      reads: Array.from({ length: 250 }, () => [5, 5]),
    });
    const p = tablePage(many, 3);
    expect(p.pages).toBe(3);
    expect(p.rows).toHaveLength(50);
    expect(p.rows[0]).toEqual({ id: "s200", label: "S200", values: ["50.000", "50.000"], reads: [5, 5] });
    expect(tablePage(many, 99).page).toBe(3);
  });
});
