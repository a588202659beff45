// Changes to the samples table's selection: what to send, and what to say afterwards.
import type { BulkChange, BulkOutcome, Named } from "./bindings";
import { plural } from "./format";

export type { BulkChange, BulkOutcome };

/** A tag typed by name: an existing tag (matched without regard to case) is reused, any other is made. */
export function tagChange(name: string, tags: Named[]): BulkChange | null {
  const n = name.trim();
  if (!n) return null;
  const existing = tags.find((t) => t.name.toLowerCase() === n.toLowerCase());
  return existing ? { add_tags: [existing.id] } : { new_tags: [n] };
}

/**
 * Why a new project's short name would be refused (the service's rule: 3 to 15 letters, digits,
 * `-` or `_`), or null when it is fine.
 */
export function projectNameProblem(name: string): string | null {
  const n = name.trim();
  if (/^[A-Za-z0-9_-]{3,15}$/.test(n)) return null;
  if (n.length < 3 || n.length > 15) return `A project's short name has 3 to 15 characters; “${n}” has ${n.length}.`;
  return `A project's short name uses only letters, digits, - and _ (no spaces); “${n}” does not.`;
}

/** The sentence shown once a change is done. */
export function outcomeText(o: BulkOutcome, verb: string): string {
  const done = o.done ? `${verb} ${plural(o.done, "sample")}.` : "";
  if (o.failed.length === 0) return done || "Nothing to change.";
  const why = o.failed[0].message;
  const more = o.failed.length > 1 ? ` (and ${o.failed.length - 1} more)` : "";
  return `${done ? done + " " : ""}${plural(o.failed.length, "sample")} could not be changed: ${why}${more}`.trim();
}
