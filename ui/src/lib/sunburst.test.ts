import { describe, expect, it } from "vitest";
import { sunburstFileName, zoomTarget } from "./sunburst";

const el = (attr: string | null) => ({ closest: () => (attr === null ? null : { getAttribute: () => attr }) });

describe("the sunburst", () => {
  it("zooms to the clicked segment's taxon, and refuses what is not a tax id", () => {
    expect(zoomTarget(el("562"))).toBe("562");
    expect(zoomTarget(el(null))).toBeNull();
    expect(zoomTarget(null)).toBeNull();
    expect(zoomTarget(el("562\" onclick=\"x"))).toBeNull();
  });

  it("names its files after the sample and the centre", () => {
    expect(sunburstFileName("gut day 1.fastq.gz", null, "svg")).toBe("gut_day_1_sunburst.svg");
    expect(sunburstFileName("gut.fq", "543", "png")).toBe("gut_sunburst_543.png");
    expect(sunburstFileName("gut.fq", "543", "krona")).toBe("gut_krona.tsv");
  });
});
