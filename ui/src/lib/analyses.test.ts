import { describe, expect, it } from "vitest";
import {
  durationSeconds,
  durationText,
  explainError,
  filterAnalyses,
  goToAnalysesPage,
  initialAnalyses,
  kindText,
  toAnalysisQuery,
  toggleAnalysisSort,
} from "./analyses";

describe("the analyses table", () => {
  it("starts newest first, every status and job", () => {
    expect(toAnalysisQuery(initialAnalyses())).toEqual({ page: 1, per_page: 50, sort: "created_at", desc: true, status: null, job: null });
  });
  it("sorts a new column ascending (times newest first) and flips the same one, back on page 1", () => {
    let t = { ...initialAnalyses(), page: 4 };
    t = toggleAnalysisSort(t, "status");
    expect([t.sort, t.desc, t.page]).toEqual(["status", false, 1]);
    expect(toggleAnalysisSort(t, "status").desc).toBe(true);
    expect(toggleAnalysisSort(t, "updated_at").desc).toBe(true);
  });
  it("filters by status and job from page 1, and leaves an unchanged table alone", () => {
    const t = { ...initialAnalyses(), page: 7 };
    const f = filterAnalyses(t, { status: "failed", job: "00000000000000aa" });
    expect(toAnalysisQuery(f)).toMatchObject({ page: 1, status: "failed", job: "00000000000000aa" });
    expect(filterAnalyses(t, { status: "" })).toBe(t);
  });
  it("pages through 10,000 analyses within bounds", () => {
    const t = initialAnalyses();
    expect(goToAnalysesPage(t, 9999, 10_000).page).toBe(200);
    expect(goToAnalysesPage(t, 0, 10_000).page).toBe(1);
    expect(goToAnalysesPage(t, 2, 10_000).page).toBe(2);
  });
});

describe("an analysis in words", () => {
  it("lasts from start to finish, and has no duration while running", () => {
    expect(durationSeconds("2026-03-01T10:00:00+00:00", "2026-03-01T10:03:20+00:00")).toBe(200);
    expect(durationSeconds("2026-03-01T10:00:00Z", null)).toBeNull();
    expect(durationSeconds("not a time", "2026-03-01T10:00:00Z")).toBeNull();
    expect([durationText(0.3), durationText(200), durationText(null)]).toEqual(["under 1 s", "3 min 20 s", "—"]);
  });
  it("names its kind", () => {
    expect(kindText("functional_profile")).toBe("Functional profile");
    expect(kindText("assembly_qc")).toBe("Assembly qc");
  });
  it("explains a failure with what to do, and keeps the service's words", () => {
    const genome = explainError("demo-genomes has no reference genome for tax id 9606; it has genomes for tax ids 562, 1280");
    expect(genome.advice).toContain("Run the alignment again with one of the tax ids");
    expect(genome.said).toBe("Demo-genomes has no reference genome for tax id 9606; it has genomes for tax ids 562, 1280.");
    expect(explainError("the analysis ran longer than its time limit of 12 h and was stopped").advice).toContain("raise the time limit");
    expect(explainError("the sample has no file yet; upload its reads first").advice).toContain("Upload its reads");
    expect(explainError("reads.fastq, line 4: the quality line is shorter than the sequence").advice).toContain("not valid sequencing data");
    expect(explainError("something new").advice).toContain("fix what it names");
    expect(explainError(null)).toEqual({ advice: expect.stringContaining("gave no reason"), said: "" });
  });
});
