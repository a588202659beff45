import { describe, expect, it } from "vitest";
import { availableMeasures, filterTaxa, measureValue, ranksOf, taxaCsv, toggleTaxaSort, type TaxonRow } from "./taxa";

const row = (name: string, rank: string, readcount: number, abundance: number | null): TaxonRow => ({
  tax_id: String(readcount),
  name,
  rank,
  parent_tax_id: null,
  readcount,
  readcount_w_children: readcount * 2,
  abundance,
});

const rows = [row("Escherichia coli", "species", 50, 0.5), row("Escherichia", "genus", 10, null), row("Bacillus, sp.", "species", 80, 0.3)];

describe("taxa table", () => {
  it("filters by text and rank and sorts with blanks last", () => {
    const v = { text: "esch", rank: "", sort: "abundance" as const, desc: true };
    expect(filterTaxa(rows, v).map((r) => r.name)).toEqual(["Escherichia coli", "Escherichia"]);
    expect(filterTaxa(rows, { ...v, text: "", rank: "species" }).map((r) => r.name)).toEqual(["Escherichia coli", "Bacillus, sp."]);
    expect(filterTaxa(rows, { ...v, text: "", desc: false }).map((r) => r.name)).toEqual(["Bacillus, sp.", "Escherichia coli", "Escherichia"]);
    // The host's taxa are left out unless asked for.
    const host = new Set([rows[0].tax_id]);
    expect(filterTaxa(rows, { ...v, text: "" }, host, false).map((r) => r.tax_id)).not.toContain(rows[0].tax_id);
    expect(filterTaxa(rows, { ...v, text: "" }, host, true).map((r) => r.tax_id)).toContain(rows[0].tax_id);
  });
  it("sort toggles and ranks in taxonomic order", () => {
    const v = toggleTaxaSort({ text: "", rank: "", sort: "abundance", desc: true }, "readcount");
    expect([v.sort, v.desc]).toEqual(["readcount", true]);
    expect(toggleTaxaSort(v, "readcount").desc).toBe(false);
    expect(ranksOf(rows)).toEqual(["genus", "species"]);
  });
  it("CSV names each measure and quotes what needs quoting", () => {
    const csv = taxaCsv([{ ...rows[2], reestimated_abundance: 0.25, bases_abundance: 0.35 }], 400);
    expect(csv).toBe(
      'tax_id,name,rank,readcount,readcount_w_children,read_share,genome_copies_share,bases_genome_copies_share,reestimated_abundance\n80,"Bacillus, sp.",species,80,160,0.4,0.3,0.35,0.25\n',
    );
    // A measure the results lack is a blank field.
    expect(taxaCsv([rows[2]], 400).split("\n")[1]).toBe('80,"Bacillus, sp.",species,80,160,0.4,0.3,,');
  });
  it("offers the measures the results carry, re-estimated first", () => {
    expect(availableMeasures(rows, 200)).toEqual(["genome_copies", "read_share"]);
    expect(availableMeasures([{ ...rows[0], reestimated_abundance: 0.6 }], 200)).toEqual(["reestimated", "genome_copies", "read_share"]);
    expect(availableMeasures([{ ...rows[0], bases_abundance: 0.6 }], 200)).toEqual(["genome_copies", "bases_genome_copies", "read_share"]);
    expect(measureValue({ ...rows[0], bases_abundance: 0.6 }, "bases_genome_copies", 200)).toBe(0.6);
    expect(availableMeasures([row("x", "species", 1, null)], 0)).toEqual([]);
    expect(measureValue(rows[0], "read_share", 200)).toBe(0.5);
  });
});
