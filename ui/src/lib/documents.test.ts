import { describe, expect, it } from "vitest";
import {
  applyTransfer,
  clearFinished,
  pendingTransfer,
  personText,
  sharedText,
  toggleDocumentSort,
  transferFraction,
  visibleDocuments,
  type DocumentRow,
  type DocumentTransfer,
} from "./documents";

const me = { id: "u0", email: "me@local.mgds", me: true };
const anna = { id: "u1", email: "anna@lab.org", me: false };
const ben = { id: "u2", email: "ben@lab.org", me: false };
const doc = (id: string, filename: string, size: number, created_at: string, mine: boolean, shared = [] as typeof me[]): DocumentRow => ({
  id,
  filename,
  size,
  created_at,
  owner: mine ? me : anna,
  mine,
  shared_with: shared,
});
const docs = [
  doc("d1", "SampleSheet.csv", 900, "2026-03-01T10:00:00Z", true, [anna, ben]),
  doc("d2", "report_run42.pdf", 120_000, "2026-03-03T10:00:00Z", false, [me]),
  doc("d3", "plate_map.xlsx", 5_000, "2026-03-02T10:00:00Z", true),
];

describe("documents in words", () => {
  it("names people by address, and the signed-in user as you", () => {
    expect(personText(me)).toBe("you");
    expect(personText(anna)).toBe("anna@lab.org");
    expect(personText({ id: "x", email: null, me: false })).toBe("a colleague");
    expect(sharedText([])).toBe("Not shared");
    expect(sharedText([anna])).toBe("anna@lab.org");
    expect(sharedText([anna, ben])).toBe("anna@lab.org and 1 more");
  });
  it("finds by name or owner, keeps to a group, and sorts", () => {
    const all = { text: "", group: "all" as const, sort: "created_at" as const, desc: true };
    expect(visibleDocuments(docs, all).map((d) => d.id)).toEqual(["d2", "d3", "d1"]);
    expect(visibleDocuments(docs, { ...all, group: "mine" }).map((d) => d.id)).toEqual(["d3", "d1"]);
    expect(visibleDocuments(docs, { ...all, group: "shared" }).map((d) => d.id)).toEqual(["d2"]);
    expect(visibleDocuments(docs, { ...all, text: "ANNA" }).map((d) => d.id)).toEqual(["d2"]);
    expect(visibleDocuments(docs, { ...all, sort: "size", desc: false }).map((d) => d.id)).toEqual(["d1", "d3", "d2"]);
    expect(visibleDocuments(docs, { ...all, sort: "filename", desc: false }).map((d) => d.filename)).toEqual([
      "plate_map.xlsx",
      "report_run42.pdf",
      "SampleSheet.csv",
    ]);
    expect(toggleDocumentSort({ sort: "created_at", desc: true }, "created_at")).toEqual({ sort: "created_at", desc: false });
    expect(toggleDocumentSort({ sort: "created_at", desc: true }, "filename")).toEqual({ sort: "filename", desc: false });
  });
});

describe("document transfers", () => {
  const moving = (id: string, done: number, total: number): DocumentTransfer => ({
    ...pendingTransfer(id, "/home/me/SampleSheet.csv", "upload"),
    state: "moving",
    done,
    total,
  });
  it("start as waiting, named after the file", () => {
    const t = pendingTransfer("t1", "/home/me/Run 42/SampleSheet.csv", "upload");
    expect([t.name, t.state, t.path]).toEqual(["SampleSheet.csv", "waiting", null]);
    expect(pendingTransfer("t2", "C:\\Users\\me\\report.pdf", "download").path).toBe("C:\\Users\\me\\report.pdf");
  });
  it("take the shell's events in order, newest transfer first", () => {
    let list = applyTransfer([], moving("t1", 0, 100));
    list = applyTransfer(list, moving("t2", 0, 10));
    list = applyTransfer(list, moving("t1", 50, 100));
    expect(list.map((t) => [t.id, t.done])).toEqual([["t2", 0], ["t1", 50]]);
    expect(transferFraction(list[1])).toBe(0.5);
    expect(transferFraction({ ...list[1], total: 0 })).toBe(0);
    expect(transferFraction({ ...list[1], state: "done" })).toBe(1);
  });
  it("clear the finished ones, keeping those under way and those that failed", () => {
    const list = [moving("a", 1, 2), { ...moving("b", 2, 2), state: "done" as const }, { ...moving("c", 0, 2), state: "failed" as const, error: "x" }, { ...moving("d", 0, 2), state: "cancelled" as const }];
    expect(clearFinished(list).map((t) => t.id)).toEqual(["a", "c"]);
  });
});
