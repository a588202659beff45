// The samples table's state: paging, sorting, filters and selection. Pure functions; the
// component holds one TableState and replaces it.
import type { SampleQuery } from "./bindings";

export type SortColumn = "created_at" | "filename" | "size" | "visibility";

/** The filters typed or chosen one value at a time. */
export interface TextFilters {
  filename: string;
  project: string;
  from: string;
  to: string;
  visibility: string;
}

export interface Filters extends TextFilters {
  /** Tag ids: samples carrying all of them, or any of them with `anyTag`. */
  tags: string[];
  anyTag: boolean;
}

export interface TableState {
  page: number;
  perPage: number;
  sort: SortColumn;
  desc: boolean;
  filters: Filters;
  selected: Set<string>;
}

export const EMPTY_FILTERS: Filters = { filename: "", project: "", from: "", to: "", visibility: "", tags: [], anyTag: false };

export function initialState(perPage = 50): TableState {
  return { page: 1, perPage, sort: "created_at", desc: true, filters: { ...EMPTY_FILTERS }, selected: new Set() };
}

/** Clicking a column header: a new column sorts ascending (dates newest first); the same column flips. */
export function toggleSort(s: TableState, column: SortColumn): TableState {
  if (s.sort === column) return { ...s, desc: !s.desc, page: 1 };
  return { ...s, sort: column, desc: column === "created_at", page: 1 };
}

/** Changing a filter goes back to page 1 and clears the selection (rows out of view stay unselected). */
export function setFilter(s: TableState, key: keyof TextFilters, value: string): TableState {
  if (s.filters[key] === value) return s;
  return { ...s, filters: { ...s.filters, [key]: value }, page: 1, selected: new Set() };
}

/** The tags to filter by (each once, in the order chosen), and whether any of them will do. */
export function setTags(s: TableState, tags: string[], anyTag = s.filters.anyTag): TableState {
  const unique = [...new Set(tags.filter((t) => t.trim() !== ""))];
  const same = unique.length === s.filters.tags.length && unique.every((t, i) => t === s.filters.tags[i]);
  if (same && anyTag === s.filters.anyTag) return s;
  return { ...s, filters: { ...s.filters, tags: unique, anyTag }, page: 1, selected: new Set() };
}

/** Adds a tag to the filter, or takes it off if it is there. */
export function toggleTag(s: TableState, tag: string): TableState {
  const has = s.filters.tags.includes(tag);
  return setTags(s, has ? s.filters.tags.filter((t) => t !== tag) : [...s.filters.tags, tag]);
}

/** Clears every filter but `keep` (a project page keeps its project). */
export function clearFilters(s: TableState, keep: Partial<TextFilters> = {}): TableState {
  return { ...s, filters: { ...EMPTY_FILTERS, ...keep }, page: 1, selected: new Set() };
}

/** How many filters narrow the table (the tags count as one), leaving out `fixed` ones. */
export function activeFilterCount(f: Filters, fixed: (keyof TextFilters)[] = []): number {
  const texts = (["filename", "project", "from", "to", "visibility"] as const).filter(
    (k) => !fixed.includes(k) && f[k].trim() !== "",
  ).length;
  return texts + (f.tags.length > 0 ? 1 : 0);
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
    tags: f.tags,
    any_tag: f.anyTag,
    project: opt(f.project),
    from: opt(f.from),
    to: opt(f.to),
    visibility: opt(f.visibility),
  };
}
