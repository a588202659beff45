import { describe, expect, it } from "vitest";
import { collectArgs, fieldsOf, initialValues, labelOf, speciesChoices } from "./jobs";

// The schemas the local service gives its classification and alignment jobs.
const classification = {
  type: "object",
  additionalProperties: false,
  properties: {
    confidence: { type: "number", minimum: 0, maximum: 1, default: 0, description: "Fraction of a read's k-mers" },
    min_hits: { type: "integer", minimum: 1, maximum: 1000, default: 2 },
  },
};
const alignment = {
  type: "object",
  required: ["tax_id"],
  properties: { tax_id: { type: "string", pattern: "^[0-9]+$", description: "NCBI tax id" } },
};

describe("a job's arguments form", () => {
  it("turns a schema into fields with their defaults", () => {
    const fields = fieldsOf(classification);
    expect(fields.map((f) => [f.name, f.label, f.kind, f.minimum, f.maximum])).toEqual([
      ["confidence", "Confidence", "number", 0, 1],
      ["min_hits", "Min hits", "integer", 1, 1000],
    ]);
    expect(initialValues(fields)).toEqual({ confidence: "0", min_hits: "2" });
    expect(fieldsOf({ type: "object", properties: {} })).toEqual([]);
    expect(fieldsOf(null)).toEqual([]);
    const odd = fieldsOf({ properties: { mode: { enum: ["fast", "exact"] }, keep: { type: ["boolean", "null"], default: true } } });
    expect(odd.map((f) => f.kind)).toEqual(["choice", "boolean"]);
    expect(initialValues(odd)).toEqual({ mode: "", keep: true });
    expect(labelOf("read-length_min")).toBe("Read length min");
  });

  it("collects typed values as arguments, leaving empty optional fields to the service", () => {
    const fields = fieldsOf(classification);
    expect(collectArgs(fields, { confidence: " 0.1 ", min_hits: "3" })).toEqual({ args: { confidence: 0.1, min_hits: 3 } });
    expect(collectArgs(fields, { confidence: "", min_hits: "" })).toEqual({ args: {} });
  });

  it("names the field and what it accepts when a value is wrong", () => {
    const fields = fieldsOf(classification);
    expect(collectArgs(fields, { confidence: "1.5", min_hits: "2" })).toEqual({ error: "Confidence must be between 0 and 1; 1.5 is not." });
    expect(collectArgs(fields, { confidence: "0", min_hits: "2.5" })).toEqual({
      error: "Min hits must be a whole number; “2.5” is not.",
    });
    expect(collectArgs(fields, { confidence: "lots", min_hits: "2" })).toHaveProperty("error", "Confidence must be a number; “lots” is not.");
    const tax = fieldsOf(alignment);
    expect(collectArgs(tax, { tax_id: "" })).toEqual({ error: "Tax id is needed." });
    expect(collectArgs(tax, { tax_id: "E. coli" })).toEqual({ error: "Tax id must be a number; “E. coli” is not." });
    const code = fieldsOf({ properties: { code: { type: "string", pattern: "^[A-Z]{3}$" } } });
    expect(collectArgs(code, { code: "ab" })).toEqual({ error: "Code: “ab” is not in the expected form." });
    expect(collectArgs(tax, { tax_id: "562" })).toEqual({ args: { tax_id: "562" } });
    expect(collectArgs(fieldsOf({ properties: { mode: { enum: ["fast", "exact"] } } }), { mode: "slow" })).toEqual({
      error: "Mode must be one of fast, exact.",
    });
  });

  it("suggests the sample's species for a tax id, most reads first", () => {
    const row = (tax_id: string, name: string, rank: string, n: number) => ({ tax_id, name, rank, readcount_w_children: n });
    const table = [row("2", "Bacteria", "superkingdom", 900), row("562", "Escherichia coli", "species", 500), row("1280", "Staphylococcus aureus", "species", 700), row("9", "Empty", "species", 0)];
    expect(speciesChoices(table).map((c) => c.tax_id)).toEqual(["1280", "562"]);
    expect(speciesChoices(table, 1)).toHaveLength(1);
  });
});
