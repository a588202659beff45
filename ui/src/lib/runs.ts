// The run dashboard's logic: a run's state in words, each barcode's counts, and the lines of its
// cumulative chart (each taxon's share of the reads so far, as each batch's classification
// finished). The numbers come from the watcher's queue (`mgds_watch::live`), summed there over
// all of a barcode's batches.
import type { Alert, LiveGroup, LivePoint, LiveRun } from "./bindings";
import { formatCount } from "./format";

export type { Alert, LiveGroup, LivePoint, LiveRun };

/** A colour for a taxon without one (the lists are made together, so only if they ever differ): grey. */
const NO_COLOUR = "#A6A6A6";

/** A run's state in words, with a tone for its badge. */
export function runState(run: LiveRun): { text: string; tone: "ok" | "busy" | "bad" } {
  switch (run.state) {
    case "uploaded":
      return { text: "Finished and uploaded", tone: "ok" };
    case "complete":
      return { text: "Finished; uploading", tone: "busy" };
    case "failed":
      return { text: `Failed${run.detail ? `: ${run.detail}` : ""}`, tone: "bad" };
    default:
      // The watcher's own words ("sequencing (no final_summary_*.txt yet)"), capitalised.
      return { text: run.detail ? run.detail.charAt(0).toUpperCase() + run.detail.slice(1) : "Sequencing", tone: "busy" };
  }
}

/** A barcode's batches in words: "12 batches: 11 uploaded, 10 classified, 1 failed". */
export function groupCounts(g: LiveGroup): string {
  const parts = [`${g.uploaded} uploaded`, `${g.classified} classified`];
  const failed = g.upload_failed + g.classification_failed;
  if (failed) parts.push(`${failed} failed`);
  return `${g.batches} ${g.batches === 1 ? "batch" : "batches"}: ${parts.join(", ")}`;
}

/** A run's totals over its barcodes. */
export function runTotals(run: LiveRun): { batches: number; classified: number; failed: number; reads: number; alerts: number } {
  let batches = 0,
    classified = 0,
    failed = 0,
    reads = 0,
    alerts = 0;
  for (const g of run.groups) {
    batches += g.batches;
    classified += g.classified;
    failed += g.upload_failed + g.classification_failed;
    reads += g.reads;
    alerts += g.alerts.length;
  }
  return { batches, classified, failed, reads, alerts };
}

export interface ChartLine {
  taxon: string;
  colour: string;
  /** SVG polyline points ("x,y x,y ..."). */
  points: string;
  /** Where each classified batch put the line, for a mark on it. */
  dots: [number, number][];
  /** The last value, in percent. */
  last: number;
}

export interface ChartLayout {
  lines: ChartLine[];
  /** The top of the y axis, in percent. */
  yMax: number;
  /** Batches classified at the right end of the x axis. */
  xMax: number;
}

/**
 * The cumulative chart of a barcode in a `width` x `height` box: x is the batches classified so
 * far, y each taxon's share of all the reads so far; one line per taxon of `g.taxa`, in order.
 */
export function chartLines(g: LiveGroup, width: number, height: number): ChartLayout {
  const pts = g.series;
  const xMax = Math.max(1, ...pts.map((p) => p.batches));
  let top = 0;
  for (const p of pts) for (const v of p.percent) top = Math.max(top, v);
  const yMax = niceMax(top);
  const x = (b: number) => (pts.length === 1 ? width : (b / xMax) * width);
  const y = (v: number) => height - (v / yMax) * height;
  const lines = g.taxa.map((t, i) => {
    const dots: [number, number][] = pts.map((p) => [round(x(p.batches)), round(y(p.percent[i] ?? 0))]);
    const coords = dots.map(([a, b]) => `${a},${b}`);
    // A single point is drawn as a flat line from the left, so it shows.
    if (pts.length === 1) coords.unshift(`0,${dots[0][1]}`);
    return {
      taxon: t.name,
      // Each taxon's own colour, as every chart draws it (`mgds_api::palette`).
      colour: g.colours[i] ?? NO_COLOUR,
      points: coords.join(" "),
      dots,
      last: pts.length ? (pts[pts.length - 1].percent[i] ?? 0) : 0,
    };
  });
  return { lines, yMax, xMax };
}

/** The smallest of 1, 2, 5, 10, 20, 25, 50 and 100 percent at or above `v`. */
export function niceMax(v: number): number {
  for (const m of [1, 2, 5, 10, 20, 25, 50, 100]) if (v <= m) return m;
  return 100;
}

const round = (v: number) => Math.round(v * 10) / 10;

/** An alert in a line: "barcode07: Salmonella enterica at 120 reads, 0.240% (rule: …)". */
export function alertText(a: Alert): string {
  return `${a.label}: ${a.taxon} at ${formatCount(a.reads)} reads, ${a.percent.toFixed(3)}% of all reads (rule: ${a.rule})`;
}
