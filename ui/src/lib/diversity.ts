// The comparison view's diversity and ordination tabs: their controls, the request they make,
// and what the screen writes beside the charts. Every number (alpha diversity, distances,
// principal coordinates, tests) is computed in Rust by `mgds-diversity` through `mgds-app`, the
// same code `mgds compare --diversity` and the exports use.
import type { ComparisonReportRequest, DiversityRequest, DiversityScreen, DiversityView, TestView } from "./bindings";
import type { CompareControls } from "./compare";

export type { DiversityRequest, DiversityScreen, DiversityView, TestView };

/** The beta diversities offered, with their names. */
export const METRICS: { key: string; label: string }[] = [
  { key: "braycurtis", label: "Bray–Curtis" },
  { key: "jaccard", label: "Jaccard" },
  { key: "weighted_unifrac", label: "Weighted UniFrac" },
  { key: "unweighted_unifrac", label: "Unweighted UniFrac" },
  { key: "aitchison", label: "Aitchison" },
];

/** PERMANOVA's permutations: the default and the most. */
export const PERMUTATIONS = 999;
export const MAX_PERMUTATIONS = 9999;
export const SEED = 42;

export interface DiversityControls {
  metric: string;
  /** Group (and colour) samples by this metadata field; null: no groups, no tests. */
  groupBy: string | null;
  permutations: number;
  seed: number;
}

export function initialDiversityControls(): DiversityControls {
  return { metric: "braycurtis", groupBy: null, permutations: PERMUTATIONS, seed: SEED };
}

/** The request the controls (the comparison's rank, measure and host switch, and the
 *  diversity's own) make for these samples. */
export function toDiversityRequest(samples: string[], c: CompareControls, d: DiversityControls): DiversityRequest {
  const whole = (v: number, fallback: number, max: number) =>
    Number.isFinite(v) ? Math.min(max, Math.max(0, Math.round(v))) : fallback;
  return {
    samples,
    rank: c.rank,
    measure: c.measure,
    metric: d.metric,
    group_by: d.groupBy || null,
    permutations: whole(d.permutations, PERMUTATIONS, MAX_PERMUTATIONS),
    seed: whole(d.seed, SEED, Number.MAX_SAFE_INTEGER),
    show_host: c.showHost,
  };
}

/** What a report of the comparison asks for: the comparison's rank, measure, top taxa (at most
 *  the report's 30) and labels, the diversity's distance, groups and permutations. */
export function toReportRequest(samples: string[], c: CompareControls, d: DiversityControls): ComparisonReportRequest {
  const div = toDiversityRequest(samples, c, d);
  return {
    samples,
    rank: c.rank,
    top: Math.min(REPORT_MAX_TOP, Math.max(1, Math.round(c.top) || 1)),
    measure: c.measure,
    metric: div.metric,
    group_by: div.group_by,
    label: c.label,
    permutations: div.permutations,
    seed: div.seed,
    show_host: c.showHost,
    title: null,
  };
}

/** The most taxa a report's chart and table give a column of their own. */
export const REPORT_MAX_TOP = 30;

/** A statistic or p-value as written on the charts: 4 decimals, or 3 figures when tiny. */
export function numberText(v: number | null): string {
  if (v == null) return "undefined";
  if (v !== 0 && Math.abs(v) < 1e-4) return v.toExponential(2);
  return v.toFixed(4);
}

/** A test's outcome in a line: "p = 0.0310 (statistic 6.9500; A 3, B 3, C 3)". */
export function testText(t: TestView, statistic = "statistic"): string {
  const groups = t.groups.map((g) => `${g.group} ${g.samples}`).join(", ");
  return `p = ${numberText(t.p_value)} (${statistic} ${numberText(t.statistic)}; ${groups})`;
}

/** The alpha table's rows: sample, group, and each measure's value as written. */
export function alphaRows(view: DiversityView): { id: string; label: string; group: string; values: string[] }[] {
  return view.samples.map((s, i) => ({
    id: s.id,
    label: s.label,
    group: s.group ?? "",
    values: view.alpha.map((a) => {
      const v = a.values[i];
      if (v == null) return "—";
      return a.metric === "observed_taxa" ? String(v) : v.toFixed(4);
    }),
  }));
}

/** The axes' shares of variance: "PC1 43.2% · PC2 20.1% · PC3 9.0%". */
export function axesText(view: DiversityView, axes = 3): string {
  return view.ordination.proportion_explained
    .slice(0, axes)
    .map((p, k) => `PC${k + 1} ${(p * 100).toFixed(1)}%`)
    .join(" · ");
}

/** What the point of sample `i` says on hover in the ordination. */
export function pointText(view: DiversityView, i: number): string | null {
  const s = view.samples[i];
  const c = view.ordination.coordinates[i];
  if (!s || !c) return null;
  const at = c
    .slice(0, 2)
    .map((v, k) => `PC${k + 1} ${v.toFixed(4)}`)
    .join(", ");
  return `${s.label}${s.group ? ` · ${s.group}` : ""} · ${at}`;
}

/** What the points of sample `i` say on hover in the alpha chart: its four values. */
export function alphaText(view: DiversityView, i: number): string | null {
  const s = view.samples[i];
  if (!s) return null;
  const values = view.alpha.map((a) => `${a.label} ${a.values[i] == null ? "—" : numberText(a.values[i])}`);
  return `${s.label}${s.group ? ` · ${s.group}` : ""} · ${values.join(" · ")}`;
}
