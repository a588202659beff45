import { describe, expect, it } from "vitest";
import { alignmentView, functionRows, profileView } from "./results";

describe("alignment results", () => {
  it("become headline numbers and a table of sequences", () => {
    const v = alignmentView({
      reference_name: "demo_ecoli Escherichia coli (synthetic)",
      reference_length: 120000,
      n_reads: 6000,
      n_mapped_reads: 1500,
      percent_mapped: 25,
      breadth_of_coverage: 0.9876,
      mean_depth: 1.234,
      contigs: [{ name: "chr", length: 120000, mapped_reads: 1500, breadth_of_coverage: 0.9876, mean_depth: 1.234 }],
    });
    expect(v.reference).toBe("demo_ecoli Escherichia coli (synthetic)");
    expect(v.facts.map((f) => f.value)).toEqual(["1,500 of 6,000 (25.0%)", "98.8%", "1.23×", "120,000 bp"]);
    expect(v.contigs).toEqual([{ name: "chr", length: 120000, mapped_reads: 1500, breadth: 0.9876, depth: 1.234 }]);
  });

  it("show a dash for what a service left out", () => {
    const v = alignmentView({ n_reads: 10, n_mapped_reads: 5 });
    expect(v.facts.map((f) => f.value)).toEqual(["5 of 10 (50.0%)", "—", "—", "—"]);
    expect(alignmentView(null).contigs).toEqual([]);
  });

  it("say how many reads are in proper pairs when the reads were pairs", () => {
    const v = alignmentView({ n_reads: 800, n_mapped_reads: 800, paired: true, n_properly_paired_reads: 780 });
    expect(v.facts.find((f) => f.testid === "pairs")?.value).toBe("780 (97.5%)");
    expect(alignmentView({ n_reads: 10, paired: false }).facts.some((f) => f.testid === "pairs")).toBe(false);
  });
});

describe("functional profile results", () => {
  const v = profileView({
    n_reads: 100,
    n_mapped_reads: 40,
    n_assigned_reads: 30,
    functions: [
      { function_id: "K00001", name: "alcohol dehydrogenase", read_count: 10, rpk: 8.5, cpm: 250000 },
      { function_id: "K00002", name: "aldehyde reductase", read_count: 20, rpk: 4, cpm: 500000 },
      { function_id: "GO:0005524", name: "ATP binding", read_count: 10, rpk: 12, cpm: 250000 },
    ],
  });

  it("are read with their totals", () => {
    expect([v.n_reads, v.n_mapped_reads, v.n_assigned_reads, v.functions.length]).toEqual([100, 40, 30, 3]);
  });

  it("filter by id or name and sort by any column, ties by id", () => {
    expect(functionRows(v.functions, "", "read_count", true).map((r) => r.function_id)).toEqual(["K00002", "GO:0005524", "K00001"]);
    expect(functionRows(v.functions, "", "rpk", false).map((r) => r.function_id)).toEqual(["K00002", "K00001", "GO:0005524"]);
    expect(functionRows(v.functions, "DEHYDRO", "name", false).map((r) => r.function_id)).toEqual(["K00001"]);
    expect(functionRows(v.functions, "go:", "name", false).map((r) => r.function_id)).toEqual(["GO:0005524"]);
    expect(v.functions[0].function_id).toBe("K00001");
  });

  it("are read in the reference shape other services send, without read counts", () => {
    const r = profileView({ table: { functional_groups: [{ id: "K00001", name: "adh", group: "ko", rpk: 2, cpm: 10 }], pathways: [] } });
    expect(r.n_reads).toBeNull();
    expect(r.functions).toEqual([{ function_id: "K00001", name: "adh", read_count: 0, rpk: 2, cpm: 10 }]);
  });
});
