// Saving files from a browser: what MGDS Desktop writes with a save dialog, a browser saves to
// its downloads folder. A stored file (reads, a document, an analysis's output) is fetched by
// the browser itself from the service's signed, expiring download address, streaming to disk;
// a drawn file (a chart, a comparison's numbers) comes from the service whole; a table the
// screen already holds is saved as it is.
import { invoke } from "./transport";
import type {
  ChartControls,
  CompareRequest,
  ComparisonReportRequest,
  ContaminationRequest,
  DiversityRequest,
  ReportMade,
  SunburstControls,
} from "./bindings";

/** What the service stores and a browser downloads. */
export type StoredKind = "sample" | "document" | "classification" | "alignment" | "functional_profile" | "control" | "report";

const STARTED = "The download has started: your browser saves it in its downloads folder.";

/** Follows `href` as a download (named `name` when the page made it). An address of the
 *  service itself is always a download, even when it answers an error, so the page stays; an
 *  object store's address names its file itself (`Content-Disposition`). */
function follow(href: string, name: string | null) {
  const a = document.createElement("a");
  a.href = href;
  if (name) a.download = name;
  else if (new URL(href, document.baseURI).origin === location.origin) a.download = "";
  a.rel = "noopener";
  a.style.display = "none";
  document.body.appendChild(a);
  a.click();
  a.remove();
}

function saveBlob(name: string, blob: Blob) {
  const url = URL.createObjectURL(blob);
  follow(url, name);
  // The download has its own copy once it starts.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function fromBase64(b64: string): Uint8Array<ArrayBuffer> {
  const text = atob(b64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** Downloads a stored file of the service; answers a note for the screen. */
export async function downloadStored(kind: StoredKind, id: string): Promise<string> {
  const { url } = await invoke<{ url: string }>("download_address", { kind, id });
  follow(url, null);
  return STARTED;
}

/** Saves a sample's abundance chart as drawn by the service. */
export async function saveChart(id: string, options: ChartControls, format: "svg" | "png", name: string): Promise<string> {
  const f = await invoke<{ mime: string; base64: string }>("chart_file", { id, options, format });
  saveBlob(name, new Blob([fromBase64(f.base64)], { type: f.mime }));
  return `Saved ${name} to your downloads.`;
}

/** Saves a sample's sunburst (`svg`, `png`) or its hierarchy as Krona text (`krona`), as made
 *  by the service. */
export async function saveSunburst(
  id: string,
  options: SunburstControls,
  format: "svg" | "png" | "krona",
  name: string,
): Promise<string> {
  const f = await invoke<{ mime: string; base64: string }>("sunburst_file", { id, options, format });
  saveBlob(name, new Blob([fromBase64(f.base64)], { type: f.mime }));
  return `Saved ${name} to your downloads.`;
}

/** Saves a comparison's chart or numbers as drawn by the service. */
export async function saveComparison(request: CompareRequest, format: string, dpi: number): Promise<string> {
  const f = await invoke<{ mime: string; base64: string; name: string }>("comparison_file", { request, format, dpi });
  saveBlob(f.name, new Blob([fromBase64(f.base64)], { type: f.mime }));
  return `Saved ${f.name} to your downloads.`;
}

/** Makes a report of a comparison (`pdf` or `html`) and saves it to the downloads, or with
 *  `keep` keeps it as a document of the service; answers what was made. */
export async function saveComparisonReport(
  request: ComparisonReportRequest,
  format: "pdf" | "html",
  keep: boolean,
): Promise<ReportMade> {
  const f = await invoke<{ mime?: string; base64?: string; name: string; made: ReportMade }>("comparison_report", {
    request,
    format,
    keep,
  });
  if (!keep && f.base64 && f.mime) saveBlob(f.name, new Blob([fromBase64(f.base64)], { type: f.mime }));
  return f.made;
}

/** Saves a file of the diversity view (`what`: "ordination.svg", "alpha.csv", ...) as made by
 *  the service. */
export async function saveDiversity(request: DiversityRequest, what: string, dpi: number): Promise<string> {
  const f = await invoke<{ mime: string; base64: string; name: string }>("diversity_file", { request, what, dpi });
  saveBlob(f.name, new Blob([fromBase64(f.base64)], { type: f.mime }));
  return `Saved ${f.name} to your downloads.`;
}

/** Saves text the screen holds (a table as CSV). */
export function saveText(name: string, mime: string, text: string): string {
  saveBlob(name, new Blob([text], { type: mime }));
  return `Saved ${name} to your downloads.`;
}

/** Downloads the reads of a taxon (and the taxa below it) in one sample, as the service makes
 *  them from the sample's reads while it sends them; answers a note for the screen. */
export function downloadTaxonReads(sample: string, taxId: string): string {
  follow(`api/web/v1/taxon_reads?sample=${encodeURIComponent(sample)}&tax_id=${encodeURIComponent(taxId)}`, null);
  return STARTED;
}

/** Saves a file of a sample's quality control (`svg`, `png`, `csv`, `positions`) as made by
 *  the service. */
export async function saveQc(id: string, format: string, name: string, title: string): Promise<string> {
  const f = await invoke<{ mime: string; base64: string }>("qc_file", { id, format, title });
  saveBlob(name, new Blob([fromBase64(f.base64)], { type: f.mime }));
  return `Saved ${name} to your downloads.`;
}

/** Saves the compared samples' quality control as CSV, as made by the service. */
export async function saveCompareQc(samples: string[], name: string): Promise<string> {
  const f = await invoke<{ mime: string; base64: string }>("compare_qc_file", { samples });
  saveBlob(name, new Blob([fromBase64(f.base64)], { type: f.mime }));
  return `Saved ${name} to your downloads.`;
}

/** Saves the contaminant scores of compared samples as CSV, as made by the service. */
export async function saveContaminants(request: ContaminationRequest, name: string): Promise<string> {
  const f = await invoke<{ mime: string; base64: string }>("contaminants_file", { request });
  saveBlob(name, new Blob([fromBase64(f.base64)], { type: f.mime }));
  return `Saved ${name} to your downloads.`;
}
