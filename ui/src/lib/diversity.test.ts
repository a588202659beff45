import { describe, expect, it } from "vitest";
import { initialControls } from "./compare";
import {
  alphaRows,
  alphaText,
  axesText,
  initialDiversityControls,
  numberText,
  pointText,
  testText,
  toDiversityRequest,
  type DiversityView,
} from "./diversity";

const view = (): DiversityView => ({
  samples: [
    { id: "s1", label: "river_1.fastq", group: "river" },
    { id: "s2", label: "lake_1.fastq", group: null },
  ],
  rank: "species",
  measure: "reestimated",
  measure_label: "re-estimated abundance",
  metric: "braycurtis",
  metric_label: "Bray–Curtis",
  group_by: "site",
  fields: ["site"],
  alpha: [
    { metric: "observed_taxa", label: "Observed taxa", explanation: "", values: [12, null], test: null },
    { metric: "shannon", label: "Shannon (ln)", explanation: "", values: [1.234567, 0.5], test: null },
  ],
  distances: [
    [0, 0.4],
    [0.4, 0],
  ],
  ordination: { proportion_explained: [1, 0], coordinates: [[0.2, 0], [-0.2, 0]] },
  permanova: null,
  test_notes: [],
  methods: [],
  skipped: [],
});

describe("diversity", () => {
  it("makes the request from the comparison's controls and its own, within bounds", () => {
    const c = { ...initialControls(), rank: "genus", measure: "read_share", showHost: true };
    const d = { ...initialDiversityControls(), groupBy: "site", permutations: 1e9, seed: -3.6 };
    expect(toDiversityRequest(["a", "b"], c, d)).toEqual({
      samples: ["a", "b"],
      rank: "genus",
      measure: "read_share",
      metric: "braycurtis",
      group_by: "site",
      permutations: 9999,
      seed: 0,
      show_host: true,
    });
    const none = toDiversityRequest(["a"], c, { ...d, groupBy: "", permutations: NaN });
    expect(none.group_by).toBeNull();
    expect(none.permutations).toBe(999);
  });

  it("writes numbers and tests as the charts do", () => {
    expect(numberText(null)).toBe("undefined");
    expect(numberText(0.001)).toBe("0.0010");
    expect(numberText(0.0000123)).toBe("1.23e-5");
    const t = { method: "PERMANOVA", statistic: 6.95, p_value: 0.031, groups: [{ group: "A", samples: 3 }, { group: "B", samples: 3 }] };
    expect(testText(t, "pseudo-F")).toBe("p = 0.0310 (pseudo-F 6.9500; A 3, B 3)");
  });

  it("lays out the alpha table and what points say on hover", () => {
    expect(alphaRows(view())).toEqual([
      { id: "s1", label: "river_1.fastq", group: "river", values: ["12", "1.2346"] },
      { id: "s2", label: "lake_1.fastq", group: "", values: ["—", "0.5000"] },
    ]);
    expect(axesText(view())).toBe("PC1 100.0% · PC2 0.0%");
    expect(pointText(view(), 0)).toBe("river_1.fastq · river · PC1 0.2000, PC2 0.0000");
    expect(pointText(view(), 5)).toBeNull();
    expect(alphaText(view(), 1)).toBe("lake_1.fastq · Observed taxa — · Shannon (ln) 0.5000");
  });
});
