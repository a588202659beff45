// The taxa table of a classification: filter, sort and CSV export.
import type { TaxonRow } from "./bindings";

export type { TaxonRow };

export type TaxaColumn = "name" | "rank" | "readcount" | "readcount_w_children" | "abundance";

export interface TaxaView {
  text: string;
  rank: string;
  sort: TaxaColumn;
  desc: boolean;
}

export function filterTaxa(rows: TaxonRow[], v: TaxaView): TaxonRow[] {
  const text = v.text.trim().toLowerCase();
  const out = rows.filter(
    (r) =>
      (v.rank === "" || r.rank === v.rank) &&
      (text === "" || r.name.toLowerCase().includes(text) || r.tax_id === text),
  );
  const dir = v.desc ? -1 : 1;
  const key = v.sort;
  return out.sort((a, b) => {
    const x = a[key];
    const y = b[key];
    if (x == null && y == null) return a.name.localeCompare(b.name);
    if (x == null) return 1; // blanks last, whichever the direction
    if (y == null) return -1;
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return c !== 0 ? c * dir : a.name.localeCompare(b.name);
  });
}

export function toggleTaxaSort(v: TaxaView, column: TaxaColumn): TaxaView {
  if (v.sort === column) return { ...v, desc: !v.desc };
  return { ...v, sort: column, desc: column !== "name" && column !== "rank" };
}

/** The ranks present, in taxonomic order, then any others alphabetically. */
export function ranksOf(rows: TaxonRow[]): string[] {
  const order = ["superkingdom", "domain", "kingdom", "phylum", "class", "order", "family", "genus", "species", "strain"];
  const present = new Set(rows.map((r) => r.rank));
  const known = order.filter((r) => present.has(r));
  const rest = [...present].filter((r) => !order.includes(r)).sort();
  return [...known, ...rest];
}

function csvField(v: string | number | null): string {
  if (v == null) return "";
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function taxaCsv(rows: TaxonRow[]): string {
  const header = ["tax_id", "name", "rank", "readcount", "readcount_w_children", "abundance"];
  const lines = rows.map((r) =>
    [r.tax_id, r.name, r.rank, r.readcount, r.readcount_w_children, r.abundance].map(csvField).join(","),
  );
  return [header.join(","), ...lines].join("\n") + "\n";
}
