import { describe, expect, it } from "vitest";
import {
  activeFilterCount,
  goToPage,
  initialState,
  pageCount,
  rangeText,
  setFilter,
  toQuery,
  toggleAllOnPage,
  toggleSelected,
  toggleSort,
  setTags,
  toggleTag,
  clearFilters,
} from "./table";

describe("samples table state", () => {
  it("starts newest first on page 1", () => {
    const s = initialState();
    expect(toQuery(s)).toMatchObject({ page: 1, per_page: 50, sort: "created_at", desc: true, filename: null });
  });
  it("sorting a new column goes ascending and back to page 1; the same column flips", () => {
    let s = { ...initialState(), page: 3 };
    s = toggleSort(s, "filename");
    expect([s.sort, s.desc, s.page]).toEqual(["filename", false, 1]);
    s = toggleSort(s, "filename");
    expect(s.desc).toBe(true);
  });
  it("filters reset the page and selection and are trimmed in the query", () => {
    let s = toggleSelected({ ...initialState(), page: 4 }, "a");
    s = setFilter(s, "filename", "  run42 ");
    expect(s.page).toBe(1);
    expect(s.selected.size).toBe(0);
    expect(toQuery(s).filename).toBe("run42");
    expect(activeFilterCount(s.filters)).toBe(1);
  });
  it("pages are bounded by the total", () => {
    expect(pageCount(10000, 50)).toBe(200);
    expect(pageCount(0, 50)).toBe(1);
    const s = initialState();
    expect(goToPage(s, 999, 10000).page).toBe(200);
    expect(goToPage(s, -5, 10000).page).toBe(1);
    expect(rangeText(2, 50, 50, 10000)).toBe("51–100 of 10,000");
    expect(rangeText(1, 50, 0, 0)).toBe("No samples");
  });
  it("select all on the page, then clear", () => {
    let s = toggleAllOnPage(initialState(), ["a", "b"]);
    expect([...s.selected]).toEqual(["a", "b"]);
    s = toggleAllOnPage(s, ["a", "b"]);
    expect(s.selected.size).toBe(0);
    s = toggleSelected(toggleSelected(s, "a"), "a");
    expect(s.selected.size).toBe(0);
  });
  it("filters by several tags, all of them or any, from page 1", () => {
    let s = toggleSelected({ ...initialState(), page: 3 }, "a");
    s = toggleTag(s, "t1");
    s = toggleTag(s, "t2");
    expect([s.page, s.selected.size]).toEqual([1, 0]);
    expect(toQuery(s)).toMatchObject({ tags: ["t1", "t2"], any_tag: false });
    expect(activeFilterCount(s.filters)).toBe(1);
    s = setTags(s, s.filters.tags, true);
    expect(toQuery(s).any_tag).toBe(true);
    expect(setTags(s, ["t1", "t2"], true)).toBe(s);
    s = toggleTag(s, "t1");
    expect(s.filters.tags).toEqual(["t2"]);
    expect(setTags(s, ["t3", "t3", ""]).filters.tags).toEqual(["t3"]);
  });
  it("keeps a project page's project when its filters are cleared, and does not count it", () => {
    let s = setFilter(initialState(), "project", "p1");
    s = setFilter(s, "filename", "run");
    expect(activeFilterCount(s.filters, ["project"])).toBe(1);
    s = clearFilters(s, { project: "p1" });
    expect([s.filters.project, s.filters.filename]).toEqual(["p1", ""]);
    expect(activeFilterCount(s.filters, ["project"])).toBe(0);
  });
});
