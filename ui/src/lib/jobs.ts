// Running a job on a sample: the job's `job_args_schema` (JSON Schema) turned into form fields,
// and what was typed turned back into arguments, checked first so a mistake is named by its field
// before anything is sent (the service checks again).
import type { JsonValue } from "./bindings";

export type { JobArgs } from "./bindings";

export type FieldKind = "number" | "integer" | "boolean" | "text" | "choice";

export interface JobField {
  name: string;
  label: string;
  kind: FieldKind;
  description: string | null;
  required: boolean;
  default: unknown;
  minimum: number | null;
  maximum: number | null;
  pattern: string | null;
  options: string[];
}

/** The form's values, as typed (text fields) or ticked (booleans). */
export type FieldValues = Record<string, string | boolean>;

const asObject = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** "min_hits" -> "Min hits". */
export function labelOf(name: string): string {
  const words = name.replace(/[_-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The form fields of an object schema, in the schema's order. */
export function fieldsOf(schema: unknown): JobField[] {
  const s = asObject(schema);
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
  return Object.entries(asObject(s.properties)).map(([name, raw]) => {
    const p = asObject(raw);
    const type = Array.isArray(p.type) ? p.type.find((t) => t !== "null") : p.type;
    const options = Array.isArray(p.enum) ? p.enum.map(String) : [];
    const kind: FieldKind = options.length
      ? "choice"
      : type === "integer"
        ? "integer"
        : type === "number"
          ? "number"
          : type === "boolean"
            ? "boolean"
            : "text";
    const num = (v: unknown) => (typeof v === "number" ? v : null);
    return {
      name,
      label: typeof p.title === "string" ? p.title : labelOf(name),
      kind,
      description: typeof p.description === "string" ? p.description : null,
      required: required.has(name),
      default: p.default,
      minimum: num(p.minimum),
      maximum: num(p.maximum),
      pattern: typeof p.pattern === "string" ? p.pattern : null,
      options,
    };
  });
}

/** The form's first values: each field's default, or empty. */
export function initialValues(fields: JobField[]): FieldValues {
  const out: FieldValues = {};
  for (const f of fields) {
    if (f.kind === "boolean") out[f.name] = f.default === true;
    else out[f.name] = f.default === undefined || f.default === null ? "" : String(f.default);
  }
  return out;
}

/**
 * The job's arguments from the form. An empty optional field is left out (the service uses its
 * default); anything out of range, of the wrong kind or not matching the field's pattern is
 * refused with the field's label and what it accepts.
 */
export function collectArgs(fields: JobField[], values: FieldValues): { args: Record<string, JsonValue> } | { error: string } {
  const args: Record<string, JsonValue> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === "boolean") {
      args[f.name] = v === true;
      continue;
    }
    const text = typeof v === "string" ? v.trim() : "";
    if (text === "") {
      if (f.required) return { error: `${f.label} is needed.` };
      continue;
    }
    if (f.kind === "number" || f.kind === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n) || (f.kind === "integer" && !Number.isInteger(n))) {
        return { error: `${f.label} must be ${f.kind === "integer" ? "a whole number" : "a number"}; “${text}” is not.` };
      }
      if ((f.minimum !== null && n < f.minimum) || (f.maximum !== null && n > f.maximum)) {
        return { error: `${f.label} must be ${rangeText(f)}; ${text} is not.` };
      }
      args[f.name] = n;
      continue;
    }
    if (f.kind === "choice" && !f.options.includes(text)) {
      return { error: `${f.label} must be one of ${f.options.join(", ")}.` };
    }
    if (f.pattern !== null && !new RegExp(f.pattern, "u").test(text)) {
      const digits = /^\^(\[0-9\]|\\d)\+\$$/.test(f.pattern);
      return { error: digits ? `${f.label} must be a number; “${text}” is not.` : `${f.label}: “${text}” is not in the expected form.` };
    }
    args[f.name] = text;
  }
  return { args };
}

/** "between 0 and 1", "at least 1", "at most 10". */
export function rangeText(f: JobField): string {
  if (f.minimum !== null && f.maximum !== null) return `between ${f.minimum} and ${f.maximum}`;
  if (f.minimum !== null) return `at least ${f.minimum}`;
  if (f.maximum !== null) return `at most ${f.maximum}`;
  return "a number";
}

export interface TaxonChoice {
  tax_id: string;
  name: string;
  readcount: number;
}

/**
 * Species of the sample's classification as suggestions for a tax id argument (an alignment to
 * the genome of a species the sample holds), most reads first.
 */
export function speciesChoices(
  table: { tax_id: string; name: string; rank: string | null; readcount_w_children: number }[],
  max = 20,
): TaxonChoice[] {
  return table
    .filter((t) => t.rank === "species" && t.readcount_w_children > 0)
    .sort((a, b) => b.readcount_w_children - a.readcount_w_children)
    .slice(0, max)
    .map((t) => ({ tax_id: t.tax_id, name: t.name, readcount: t.readcount_w_children }));
}
