// The taxa table of a classification: filter, sort and CSV export.
import type { TaxonRow } from "./bindings";

export type { TaxonRow };

export type TaxaColumn = "name" | "rank" | "readcount" | "readcount_w_children" | "abundance" | "bases_abundance" | "reestimated_abundance";

/** What an abundance figure measures (`mgds_api::Measure`): each answers another question. */
export type MeasureKey = "reestimated" | "genome_copies" | "bases_genome_copies" | "read_share";

export interface MeasureInfo {
  key: MeasureKey;
  label: string;
  explanation: string;
}

export const MEASURES: MeasureInfo[] = [
  {
    key: "reestimated",
    label: "Re-estimated abundance",
    explanation:
      "Share of reads per species after reads placed above species are shared out to the species below (Bracken's method, from the database's k-mer distribution).",
  },
  {
    key: "genome_copies",
    label: "Share of genome copies",
    explanation: "Each species' reads over its mean genome length, as a share of all species: how many copies of each genome were sequenced.",
  },
  {
    key: "bases_genome_copies",
    label: "Share of genome copies, by bases",
    explanation:
      "Each species' classified bases over its mean genome length, as a share of all species: the genome copies where read lengths differ between taxa (long reads), shown first for them.",
  },
  {
    key: "read_share",
    label: "Share of reads",
    explanation: "Reads of the taxon and below as a share of all reads in the sample, unclassified reads included.",
  },
];

/** A row's value for a measure, as a fraction, or null where the results do not give it. */
export function measureValue(r: TaxonRow, key: MeasureKey, nReads: number): number | null {
  switch (key) {
    case "reestimated":
      return r.reestimated_abundance ?? null;
    case "genome_copies":
      return r.abundance ?? null;
    case "bases_genome_copies":
      return r.bases_abundance ?? null;
    case "read_share":
      return nReads > 0 ? r.readcount_w_children / nReads : null;
  }
}

/** The measures the results carry, in order of preference; the first is shown by default. */
export function availableMeasures(rows: TaxonRow[], nReads: number): MeasureKey[] {
  return MEASURES.map((m) => m.key).filter((k) => rows.some((r) => measureValue(r, k, nReads) != null));
}

export interface TaxaView {
  text: string;
  rank: string;
  sort: TaxaColumn;
  desc: boolean;
}

/** The rows shown: at the rank, matching the text, the host's taxa (`host`, as the service
 *  names them) left out unless `showHost`; sorted. */
export function filterTaxa(rows: TaxonRow[], v: TaxaView, host: ReadonlySet<string> = new Set(), showHost = true): TaxonRow[] {
  const text = v.text.trim().toLowerCase();
  const out = rows.filter(
    (r) =>
      (showHost || !host.has(r.tax_id)) &&
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

/** The taxa as CSV; each abundance measure is a fraction (0-1) under its own name. */
export function taxaCsv(rows: TaxonRow[], nReads: number): string {
  const header = ["tax_id", "name", "rank", "readcount", "readcount_w_children", "read_share", "genome_copies_share", "bases_genome_copies_share", "reestimated_abundance"];
  const lines = rows.map((r) =>
    [
      r.tax_id,
      r.name,
      r.rank,
      r.readcount,
      r.readcount_w_children,
      measureValue(r, "read_share", nReads),
      r.abundance ?? null,
      r.bases_abundance ?? null,
      r.reestimated_abundance ?? null,
    ]
      .map(csvField)
      .join(","),
  );
  return [header.join(","), ...lines].join("\n") + "\n";
}
