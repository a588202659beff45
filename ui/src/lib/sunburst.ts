// The sample page's sunburst: what a click on it means and the file names it saves under. The
// picture itself (rings, colours, labels) is drawn in Rust by `mgds-plots`, the same code
// `mgds analyses results --sunburst` and the exports use.
import type { SunburstView } from "./bindings";

export type { SunburstView };

/** The taxon a click on the sunburst zooms to: a segment's own, or the centre's parent (the
 *  centre carries it when zoomed in); null off the chart or on the top centre. */
export function zoomTarget(el: { closest(selector: string): { getAttribute(name: string): string | null } | null } | null): string | null {
  const hit = el?.closest("[data-tax-id]");
  const id = hit?.getAttribute("data-tax-id") ?? null;
  return id && /^[A-Za-z0-9_.:-]{1,32}$/.test(id) ? id : null;
}

/** A file name for the sunburst of `sample` (its name) centred on `centre`. */
export function sunburstFileName(sample: string, centre: string | null, format: "svg" | "png" | "krona"): string {
  const base = sample.replace(/\.(fastq|fq|fasta|fa|fna)(\.gz)?$/i, "").replace(/[^A-Za-z0-9._-]+/g, "_") || "sample";
  const at = centre ? `_${centre.replace(/[^A-Za-z0-9_-]+/g, "_")}` : "";
  return format === "krona" ? `${base}_krona.tsv` : `${base}_sunburst${at}.${format}`;
}
