// The reads' quality control: file names and the short figures the sample page and the
// comparison's quality tab show. The figures and the verdict are the service's own (counted as
// its engine read the sample); the chart is drawn in Rust by `mgds-plots`.
import type { QcComparison, QcRow, QcView, ReadQc } from "./bindings";
import { formatCount } from "./format";

export type { QcComparison, QcRow, QcView, ReadQc };

/** The files of one sample's quality control. */
export type QcFile = "svg" | "png" | "csv" | "positions";

function stem(sample: string): string {
  return sample.replace(/\.(fastq|fq|fasta|fa|fna)(\.gz)?$/i, "").replace(/[^A-Za-z0-9._-]+/g, "_") || "sample";
}

/** A file name for the quality control of `sample` (its name). */
export function qcFileName(sample: string, what: QcFile): string {
  switch (what) {
    case "positions":
      return `${stem(sample)}_quality_by_position.csv`;
    case "csv":
      return `${stem(sample)}_qc.csv`;
    default:
      return `${stem(sample)}_qc.${what}`;
  }
}

/** One line of figures: reads, bases, lengths, quality, GC and N. */
export function qcSummary(q: ReadQc): string {
  const parts = [
    `${formatCount(q.reads)} reads${q.pairs > 0 ? ` (${formatCount(q.pairs)} pairs)` : ""}`,
    `${formatCount(q.bases)} bases`,
    q.long_reads ? `N50 ${formatCount(q.n50)}` : `median length ${formatCount(q.median_length)}`,
    q.mean_quality != null ? `mean Q${q.mean_quality.toFixed(1)}` : "no qualities (FASTA)",
    `GC ${(q.gc * 100).toFixed(1)}%`,
  ];
  if (q.n_share > 0) parts.push(`N ${(q.n_share * 100).toFixed(2)}%`);
  return parts.join(" · ");
}

/** Rows that failed first, then those without figures, then those that passed, each kept in
 *  the order given. */
export function failedFirst(rows: QcRow[]): QcRow[] {
  const rank = (r: QcRow) => (r.qc == null ? 1 : r.qc.failures.length > 0 ? 0 : 2);
  return rows.map((r, i) => [r, i] as const).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]).map(([r]) => r);
}
