// The comparison view's state: its controls, the request they make, what a hovered bar or cell
// says, and the table behind the chart. The numbers themselves (top taxa, "Other", clustering)
// are computed in Rust by `mgds-plots`, the same code `mgds compare` and the exports use, so the
// screen, the files and the command line agree.
import type { ComparisonView, CompareRequest } from "./bindings";
import { formatCount } from "./format";

export type { ComparisonView, CompareRequest };

/** The fewest and most samples compared at once. */
export const MIN_SAMPLES = 2;
export const MAX_SAMPLES = 500;
/** The most taxa with a column of their own. */
export const MAX_TOP = 50;

export const RANKS = ["species", "genus", "family", "order", "class", "phylum"] as const;

export interface CompareControls {
  rank: string;
  top: number;
  /** A measure key, or null for the best one every sample has. */
  measure: string | null;
  chart: "bars" | "heatmap";
  cluster: boolean;
  /** Label samples by this metadata field (null: the file name). */
  label: string | null;
  /** Order samples by this metadata field (null: as chosen). */
  orderBy: string | null;
  showHost: boolean;
  showUnclassified: boolean;
  /** The chart, or the table of the same numbers. */
  show: "chart" | "table";
  /** The PNG export's resolution. */
  dpi: number;
}

export function initialControls(): CompareControls {
  return {
    rank: "species",
    top: 20,
    measure: null,
    chart: "bars",
    cluster: false,
    label: null,
    orderBy: null,
    showHost: false,
    showUnclassified: false,
    show: "chart",
    dpi: 300,
  };
}

/** Why these samples cannot be compared, or null. */
export function selectionProblem(count: number): string | null {
  if (count < MIN_SAMPLES) return `Choose at least ${MIN_SAMPLES} samples to compare.`;
  if (count > MAX_SAMPLES) return `Compare at most ${MAX_SAMPLES} samples at once (${formatCount(count)} chosen).`;
  return null;
}

/** The request the controls make for these samples; `flagged`: taxa the controls tab called
 *  possible contaminants (marked on the chart, or left out with `hideFlagged`). */
export function toRequest(samples: string[], c: CompareControls, flagged: string[] = [], hideFlagged = false): CompareRequest {
  const top = Math.min(MAX_TOP, Math.max(1, Math.round(Number.isFinite(c.top) ? c.top : 20)));
  return {
    samples,
    rank: c.rank,
    top,
    measure: c.measure,
    chart: c.chart,
    cluster: c.chart === "heatmap" && c.cluster,
    label: c.label || null,
    // Clustering orders the samples itself.
    order_by: c.chart === "heatmap" && c.cluster ? null : c.orderBy || null,
    show_host: c.showHost,
    show_unclassified: c.showUnclassified,
    flagged,
    hide_flagged: hideFlagged && flagged.length > 0,
  };
}

/** Whether the value of `view` is reads rather than a percentage. */
export function isReads(view: ComparisonView): boolean {
  return view.measure === "readcount";
}

/** The name of the measure shown. */
export function measureLabel(view: ComparisonView): string {
  return view.measures.find((m) => m.key === view.measure)?.label ?? view.measure;
}

/** A value as the chart's hover shows it: "12.346%" or "1,234 reads". */
export function valueText(view: ComparisonView, v: number): string {
  if (isReads(view)) return `${formatCount(v)} reads`;
  return `${v.toFixed(3)}%`;
}

export interface Cell {
  sample: string;
  sampleId: string;
  taxon: string;
  taxId: string | null;
  value: string;
  reads: number;
}

/** What the bar segment or heatmap cell of `sample` (a row) and `column` stands for. */
export function cellAt(view: ComparisonView, sample: number, column: number): Cell | null {
  const s = view.samples[sample];
  const c = view.columns[column];
  if (!s || !c) return null;
  return {
    sample: s.label,
    sampleId: s.id,
    taxon: c.label,
    taxId: c.tax_id ?? null,
    value: valueText(view, view.values[sample][column]),
    reads: view.reads[sample][column],
  };
}

/** The row and taxon a chart element stands for, read from its `data-sample` and
 *  `data-tax-id` attributes (or its nearest ancestor's); null off the bars and cells. */
export function chartTarget(el: { closest(selector: string): { getAttribute(name: string): string | null } | null } | null): {
  sample: number;
  taxId: string | null;
} | null {
  const rect = el?.closest("[data-sample]");
  if (!rect) return null;
  const sample = Number(rect.getAttribute("data-sample"));
  if (!Number.isInteger(sample) || sample < 0) return null;
  return { sample, taxId: rect.getAttribute("data-tax-id") };
}

/** The column of taxon `taxId` in the view, or -1. */
export function columnOf(view: ComparisonView, taxId: string | null): number {
  if (taxId == null) return -1;
  return view.columns.findIndex((c) => c.tax_id === taxId);
}

export interface TableSlice {
  rows: { id: string; label: string; values: string[]; reads: number[] }[];
  page: number;
  pages: number;
}

/** One page of the table view (samples as rows, the chart's columns as columns). */
export function tablePage(view: ComparisonView, page: number, perPage = 100): TableSlice {
  const pages = Math.max(1, Math.ceil(view.samples.length / perPage));
  const p = Math.min(Math.max(1, page), pages);
  const from = (p - 1) * perPage;
  const rows = view.samples.slice(from, from + perPage).map((s, k) => {
    const i = from + k;
    return {
      id: s.id,
      label: s.label,
      values: view.values[i].map((v) => (isReads(view) ? formatCount(v) : v.toFixed(3))),
      reads: view.reads[i],
    };
  });
  return { rows, page: p, pages };
}

/** The samples left out of the chart, in a sentence; null when none were. */
export function skippedText(view: ComparisonView): string | null {
  const n = view.skipped.length;
  if (n === 0) return null;
  const shown = view.skipped.slice(0, 5).map((s) => `${s.name} (${s.why})`);
  const more = n > 5 ? `, and ${n - 5} more` : "";
  return `${n === 1 ? "1 sample is" : `${n} samples are`} not in the chart: ${shown.join("; ")}${more}.`;
}

/** The chart's caption: what is drawn, how it is ordered, and what it leaves out. */
export function caption(view: ComparisonView, c: CompareControls): string {
  const parts = [`${measureLabel(view)} at ${view.rank} rank`, `${view.samples.length} samples`];
  if (view.clustering) parts.push(`clustered: ${view.clustering}`);
  else if (c.orderBy) parts.push(`ordered by ${c.orderBy}`);
  parts.push(...view.notes);
  return parts.join(" · ");
}
