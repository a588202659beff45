// The Documents screen: who a document belongs to and is shared with, in words; sorting and
// finding documents; and the transfers (uploads and downloads) as the shell reports them.
import type { DocumentRow, DocumentTransfer, Person } from "./bindings";
import { plural } from "./format";

export type { DocumentRow, DocumentsView, DocumentTransfer, Person } from "./bindings";

/** A person as a line of text: "you", their address, or "a colleague" when it is not shown. */
export function personText(p: Person): string {
  if (p.me) return "you";
  return p.email ?? "a colleague";
}

/** "Not shared", "anna@lab.org", "anna@lab.org and 2 more". */
export function sharedText(people: Person[]): string {
  if (people.length === 0) return "Not shared";
  const first = personText(people[0]);
  return people.length === 1 ? first : `${first} and ${plural(people.length - 1, "more", "more")}`;
}

export type DocumentSort = "filename" | "size" | "created_at" | "owner";
export type DocumentGroup = "all" | "mine" | "shared";

/** The documents in `group` whose name or owner contains `text`, sorted. */
export function visibleDocuments(
  docs: DocumentRow[],
  opts: { text: string; group: DocumentGroup; sort: DocumentSort; desc: boolean },
): DocumentRow[] {
  const needle = opts.text.trim().toLowerCase();
  const kept = docs.filter(
    (d) =>
      (opts.group === "all" || (opts.group === "mine") === d.mine) &&
      (!needle || d.filename.toLowerCase().includes(needle) || (d.owner.email ?? "").toLowerCase().includes(needle)),
  );
  const key = (d: DocumentRow): string | number =>
    opts.sort === "size" ? d.size : opts.sort === "owner" ? personText(d.owner).toLowerCase() : opts.sort === "filename" ? d.filename.toLowerCase() : d.created_at;
  const sign = opts.desc ? -1 : 1;
  return [...kept].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    if (x < y) return -sign;
    if (x > y) return sign;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}

/** The same column flips; a new one sorts ascending (dates and sizes largest first). */
export function toggleDocumentSort(current: { sort: DocumentSort; desc: boolean }, sort: DocumentSort): { sort: DocumentSort; desc: boolean } {
  if (current.sort === sort) return { sort, desc: !current.desc };
  return { sort, desc: sort === "created_at" || sort === "size" };
}

/** Under way: the shell has it and it can be cancelled. */
export function transferActive(t: DocumentTransfer): boolean {
  return t.state === "waiting" || t.state === "moving";
}

/** The transfers with `e` applied: a new one goes first, a known one is replaced. */
export function applyTransfer(list: DocumentTransfer[], e: DocumentTransfer): DocumentTransfer[] {
  return list.some((t) => t.id === e.id) ? list.map((t) => (t.id === e.id ? e : t)) : [e, ...list];
}

/** Finished transfers taken off the list (those under way and those that failed stay). */
export function clearFinished(list: DocumentTransfer[]): DocumentTransfer[] {
  return list.filter((t) => transferActive(t) || t.state === "failed");
}

/** Share of the transfer done, 0..1 (0 while the size is not known). */
export function transferFraction(t: DocumentTransfer): number {
  if (t.state === "done") return 1;
  return t.total > 0 ? Math.min(1, t.done / t.total) : 0;
}

/** A transfer waiting to start, as the window shows it before the shell's first event. */
export function pendingTransfer(id: string, path: string, direction: "upload" | "download"): DocumentTransfer {
  return {
    id,
    direction,
    name: path.split(/[\\/]/).pop() || path,
    state: "waiting",
    done: 0,
    total: 0,
    document_id: null,
    path: direction === "download" ? path : null,
    error: null,
  };
}

let counter = 0;
export function newTransferId(): string {
  counter += 1;
  return `d${Date.now().toString(36)}${counter}`;
}
