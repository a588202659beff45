// The samples table's state: paging, sorting, filters and selection. Pure functions; the
// component holds one TableState and replaces it.
import type { SampleQuery } from "./bindings";

export type SortColumn = "created_at" | "filename" | "size" | "visibility";

export interface Filters {
  filename: string;
  tag: string;
  project: string;
  from: string;
  to: string;
  visibility: string;
}

export interface TableState {
  page: number;
  perPage: number;
  sort: SortColumn;
  desc: boolean;
  filters: Filters;
  selected: Set<string>;
}

export const EMPTY_FILTERS: Filters = { filename: "", tag: "", project: "", from: "", to: "", visibility: "" };

export function initialState(perPage = 50): TableState {
  return { page: 1, perPage, sort: "created_at", desc: true, filters: { ...EMPTY_FILTERS }, selected: new Set() };
}

/** Clicking a column header: a new column sorts ascending (dates newest first); the same column flips. */
export function toggleSort(s: TableState, column: SortColumn): TableState {
  if (s.sort === column) return { ...s, desc: !s.desc, page: 1 };
  return { ...s, sort: column, desc: column === "created_at", page: 1 };
}

/** Changing a filter goes back to page 1 and clears the selection (rows out of view stay unselected). */
export function setFilter(s: TableState, key: keyof Filters, value: string): TableState {
  if (s.filters[key] === value) return s;
  return { ...s, filters: { ...s.filters, [key]: value }, page: 1, selected: new Set() };
}

export function clearFilters(s: TableState): TableState {
  return { ...s, filters: { ...EMPTY_FILTERS }, page: 1, selected: new Set() };
}

export function activeFilterCount(f: Filters): number {
  return Object.values(f).filter((v) => v.trim() !== "").length;
}

export function pageCount(total: number, perPage: number): number {
  return Math.max(1, Math.ceil(total / Math.max(1, perPage)));
}

export function goToPage(s: TableState, page: number, total: number): TableState {
  const p = Math.min(Math.max(1, Math.floor(page)), pageCount(total, s.perPage));
  return p === s.page ? s : { ...s, page: p };
}

/** "Showing 51–100 of 10,000". */
export function rangeText(page: number, perPage: number, shown: number, total: number): string {
  if (total === 0 || shown === 0) return "No samples";
  const first = (page - 1) * perPage + 1;
  return `${first.toLocaleString("en-US")}–${(first + shown - 1).toLocaleString("en-US")} of ${total.toLocaleString("en-US")}`;
}

export function toggleSelected(s: TableState, id: string): TableState {
  const selected = new Set(s.selected);
  if (!selected.delete(id)) selected.add(id);
  return { ...s, selected };
}

/** The header checkbox: selects every row on the page, or clears them if all were selected. */
export function toggleAllOnPage(s: TableState, ids: string[]): TableState {
  const all = ids.length > 0 && ids.every((id) => s.selected.has(id));
  const selected = new Set(s.selected);
  for (const id of ids) {
    if (all) selected.delete(id);
    else selected.add(id);
  }
  return { ...s, selected };
}

/** The query the shell's `list_samples` command takes. */
export function toQuery(s: TableState): SampleQuery {
  const f = s.filters;
  const opt = (v: string) => (v.trim() === "" ? null : v.trim());
  return {
    page: s.page,
    per_page: s.perPage,
    sort: s.sort,
    desc: s.desc,
    filename: opt(f.filename),
    tag: opt(f.tag),
    project: opt(f.project),
    from: opt(f.from),
    to: opt(f.to),
    visibility: opt(f.visibility),
  };
}
