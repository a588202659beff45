import { describe, expect, it } from "vitest";
import {
  applyWatchProgress,
  folderSummary,
  folderToForm,
  groupFolder,
  limitLabel,
  newFolder,
  parseMetadata,
  parsePatterns,
  runStatus,
  sampleStatus,
  watcherStatus,
  type WatchView,
  type FolderView,
  type WatchedSample,
} from "./watch";

const sample = (over: Partial<WatchedSample>): WatchedSample => ({
  key: "k",
  folder: "/runs",
  run: null,
  run_id: null,
  name: "S1",
  external_id: "x",
  recipe: { single: "/runs/a.fq" },
  state: "seen",
  sample_id: null,
  attempts: 0,
  error: null,
  jobs_pending: false,
  live: null,
  ...over,
});

const folder = (over: Partial<FolderView> = {}): FolderView => ({
  ...newFolder("/runs"),
  illumina: { pair: true, join_lanes: true },
  nanopore: "per_barcode",
  jobs: [],
  missing: false,
  files: { seen: 0, settled: 0, uploading: 0, confirmed: 0, failed: 0 },
  file_list: [],
  alerts: [],
  ...over,
});

const view = (over: Partial<WatchView> = {}): WatchView => ({
  folders: [folder()],
  running: true,
  paused: false,
  problem: null,
  config_file: "/c/watch.toml",
  upload_limit: null,
  runs: [],
  samples: [],
  samples_total: 0,
  ...over,
});

describe("watched folders", () => {
  it("says where each sample stands, with progress, speed and time left while it uploads", () => {
    expect(sampleStatus(sample({ state: "confirmed" })).tone).toBe("ok");
    expect(sampleStatus(sample({ state: "seen" })).text).toMatch(/finish/);
    const up = sampleStatus(sample({ state: "uploading", live: { sent: 50, total: 200, rate: 10 } }));
    expect(up.text).toMatch(/^Uploading 25%/);
    expect(up.text).toMatch(/left$/);
    expect(sampleStatus(sample({ state: "uploading", error: "service unavailable" })).text).toBe(
      "Retrying after: service unavailable",
    );
    const failed = sampleStatus(sample({ state: "failed", error: "the file is not FASTQ" }));
    expect(failed.tone).toBe("bad");
    expect(failed.text).toContain("the file is not FASTQ");
  });

  it("names run states, a failed run with the instrument's reason", () => {
    const r = { path: "/runs/R1", folder: "/runs", kind: "illumina", run_id: "R1", state: "failed", detail: "RunStatus Failed" };
    expect(runStatus(r).text).toBe("Failed on the instrument: RunStatus Failed; not uploaded");
    expect(runStatus({ ...r, state: "waiting", detail: "CopyComplete.txt" }).text).toBe("Waiting for CopyComplete.txt");
    expect(runStatus({ ...r, state: "uploaded" }).tone).toBe("ok");
  });

  it("groups samples under their run and keeps loose files last, per folder", () => {
    const v = view({
      runs: [{ path: "/runs/R1", folder: "/runs", kind: "illumina", run_id: "R1", state: "uploaded", detail: null }],
      samples: [
        sample({ key: "a2", run: "/runs/R1", run_id: "R1", name: "A2" }),
        sample({ key: "b", name: "loose" }),
        sample({ key: "a1", run: "/runs/R1", run_id: "R1", name: "A1" }),
        sample({ key: "c", folder: "/other", name: "elsewhere" }),
      ],
    });
    const g = groupFolder(v, "/runs");
    expect(g.map((x) => x.run?.run_id ?? null)).toEqual(["R1", null]);
    expect(g[0].samples.map((s) => s.name)).toEqual(["A1", "A2"]);
    expect(g[1].samples.map((s) => s.name)).toEqual(["loose"]);
  });

  it("applies progress to one sample only", () => {
    const v = view({ samples: [sample({ key: "a" }), sample({ key: "b" })] });
    const next = applyWatchProgress(v, "b", { sent: 1, total: 2, rate: 0 });
    expect(next.samples[0].live).toBeNull();
    expect(next.samples[1].live?.sent).toBe(1);
    expect(next.samples[1].state).toBe("uploading");
  });

  it("summarises settings and the watcher's state", () => {
    expect(folderSummary(folder({ tags: ["miseq"], recursive: false }))).toBe(
      "Recognise runs · this folder only · R1/R2 as one sample · tags miseq",
    );
    expect(folderSummary(folder({ layout: "nanopore", nanopore: "per_file" }))).toBe(
      "Nanopore (MinKNOW) output · Nanopore: one sample per file",
    );
    expect(watcherStatus(view({ folders: [] })).text).toBe("No folder is watched yet");
    expect(watcherStatus(view()).text).toBe("Watching 1 folder");
    expect(watcherStatus(view({ paused: true })).text).toMatch(/paused/);
    expect(watcherStatus(view({ problem: "Another watcher" })).tone).toBe("bad");
  });
});

describe("the folder form", () => {
  it("reads glob patterns, keeping commas inside braces", () => {
    expect(parsePatterns(" *.fastq.gz, Undetermined_*,,*.{fastq,fq}.gz \n reads/* ")).toEqual([
      "*.fastq.gz",
      "Undetermined_*",
      "*.{fastq,fq}.gz",
      "reads/*",
    ]);
    expect(parsePatterns("  ")).toEqual([]);
  });

  it("reads metadata one key = value per line and names a bad line", () => {
    expect(parseMetadata("run_by = Ana\n\n  site=Leeds = North \r\nempty =")).toEqual({
      metadata: { run_by: "Ana", site: "Leeds = North", empty: "" },
    });
    expect(parseMetadata("run_by = Ana\nnonsense")).toEqual({ error: "Metadata line 2 (“nonsense”) is not “key = value”." });
    expect(parseMetadata(" = value")).toHaveProperty("error");
  });

  it("fills the form from a saved folder, and the texts read back to the same settings", () => {
    const f = folder({
      layout: "illumina",
      recursive: false,
      include: ["*.{fastq,fq}.gz"],
      exclude: ["Undetermined_*"],
      tags: ["miseq", "run 7"],
      metadata: { run_by: "Ana", lane_count: 2 },
      jobs: ["j1"],
      illumina: { pair: false, join_lanes: true },
      nanopore: "per_file",
    });
    const { form, texts } = folderToForm(f);
    expect(form).toMatchObject({ layout: "illumina", recursive: false, jobs: ["j1"], pair: false, join_lanes: true, per_file: true });
    expect(parsePatterns(texts.include)).toEqual(f.include);
    expect(parsePatterns(texts.exclude)).toEqual(f.exclude);
    expect(parseMetadata(texts.metadata)).toEqual({ metadata: { run_by: "Ana", lane_count: "2" } });
    expect(texts.tags).toBe("miseq, run 7");
    form.jobs.push("j2");
    expect(f.jobs).toEqual(["j1"]);
  });

  it("says the upload limit in words and shows metadata in the summary", () => {
    expect(limitLabel(null)).toBe("No upload limit");
    expect(limitLabel(12_500_000)).toBe("At most 12.5 MB/s");
    expect(limitLabel(500_000)).toBe("At most 500 kB/s");
    expect(folderSummary(folder({ metadata: { run_by: "Ana" } }))).toContain("metadata run_by=Ana");
  });
});
