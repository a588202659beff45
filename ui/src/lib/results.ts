// Results of alignments and functional profiles, read defensively: a compatible service may
// leave fields out, and a missing number shows as "—" rather than breaking the page.
import { formatCount } from "./format";

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {});

export interface Contig {
  name: string;
  length: number | null;
  mapped_reads: number | null;
  breadth: number | null;
  depth: number | null;
}

export interface AlignmentView {
  reference: string;
  facts: { label: string; value: string; testid: string }[];
  contigs: Contig[];
}

const pct = (f: number | null, digits = 1) => (f === null ? "—" : `${(f * 100).toFixed(digits)}%`);
const depth = (d: number | null) => (d === null ? "—" : `${d.toFixed(d < 10 ? 2 : 1)}×`);

/** An alignment's results as headline numbers and a table of its reference's sequences. */
export function alignmentView(results: unknown): AlignmentView {
  const r = obj(results);
  const reads = num(r.n_reads);
  const mapped = num(r.n_mapped_reads);
  const percent = num(r.percent_mapped) ?? (reads && mapped !== null ? (100 * mapped) / reads : null);
  return {
    reference: str(r.reference_name) || "the reference genome",
    facts: [
      {
        label: "Reads mapped",
        value: `${formatCount(mapped)} of ${formatCount(reads)}${percent === null ? "" : ` (${percent.toFixed(1)}%)`}`,
        testid: "mapped",
      },
      { label: "Genome covered", value: pct(num(r.breadth_of_coverage)), testid: "breadth" },
      { label: "Mean depth", value: depth(num(r.mean_depth)), testid: "depth" },
      { label: "Genome length", value: num(r.reference_length) === null ? "—" : `${formatCount(num(r.reference_length))} bp`, testid: "length" },
      ...(r.paired === true
        ? [
            {
              label: "Reads in proper pairs",
              value: `${formatCount(num(r.n_properly_paired_reads))}${reads ? ` (${((100 * (num(r.n_properly_paired_reads) ?? 0)) / reads).toFixed(1)}%)` : ""}`,
              testid: "pairs",
            },
          ]
        : []),
    ],
    contigs: (Array.isArray(r.contigs) ? r.contigs : []).map((c) => {
      const o = obj(c);
      return { name: str(o.name), length: num(o.length), mapped_reads: num(o.mapped_reads), breadth: num(o.breadth_of_coverage), depth: num(o.mean_depth) };
    }),
  };
}

export { depth as formatDepth, pct as formatFraction };

export interface FunctionRow {
  function_id: string;
  name: string;
  read_count: number;
  rpk: number | null;
  cpm: number | null;
}

export type FunctionColumn = "function_id" | "name" | "read_count" | "rpk" | "cpm";

export interface ProfileView {
  n_reads: number | null;
  n_mapped_reads: number | null;
  n_assigned_reads: number | null;
  functions: FunctionRow[];
}

/** A functional profile's results: this service's (with read counts), or the reference shape
 * other services send (`table.functional_groups`, without them). */
export function profileView(results: unknown): ProfileView {
  const r = obj(results);
  if (!Array.isArray(r.functions)) {
    const groups = obj(r.table).functional_groups;
    return {
      n_reads: null,
      n_mapped_reads: null,
      n_assigned_reads: null,
      functions: (Array.isArray(groups) ? groups : []).map((g) => {
        const o = obj(g);
        return { function_id: str(o.id), name: str(o.name), read_count: 0, rpk: num(o.rpk), cpm: num(o.cpm) };
      }),
    };
  }
  return {
    n_reads: num(r.n_reads),
    n_mapped_reads: num(r.n_mapped_reads),
    n_assigned_reads: num(r.n_assigned_reads),
    functions: r.functions.map((f) => {
      const o = obj(f);
      return { function_id: str(o.function_id), name: str(o.name), read_count: num(o.read_count) ?? 0, rpk: num(o.rpk), cpm: num(o.cpm) };
    }),
  };
}

/** The functions whose id or name contains `filter` (any case), sorted by `column`. */
export function functionRows(rows: FunctionRow[], filter: string, column: FunctionColumn, desc: boolean): FunctionRow[] {
  const f = filter.trim().toLowerCase();
  const kept = f ? rows.filter((r) => r.function_id.toLowerCase().includes(f) || r.name.toLowerCase().includes(f)) : [...rows];
  const dir = desc ? -1 : 1;
  return kept.sort((a, b) => {
    const x = a[column];
    const y = b[column];
    const c = typeof x === "string" || typeof y === "string" ? String(x).localeCompare(String(y)) : (x ?? -Infinity) - (y ?? -Infinity);
    return c * dir || a.function_id.localeCompare(b.function_id);
  });
}
