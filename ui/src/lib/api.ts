// Typed calls into the shell. Every command answers data or rejects with {code, message}.
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { FileCheck, ProgressEvent } from "./uploads";
import type { JobArgs } from "./jobs";
import type { TaxonRow } from "./taxa";
import type { Live, NewFolder, WatchView } from "./watch";
import type { BulkChange, BulkOutcome } from "./bulk";

export interface AppError {
  code: string;
  message: string;
}

/** Any rejection as {code, message}, in words for people. */
export function asError(e: unknown): AppError {
  if (e && typeof e === "object" && "message" in e) {
    const o = e as { code?: unknown; message: unknown };
    return { code: typeof o.code === "string" ? o.code : "failed", message: String(o.message) };
  }
  return { code: "failed", message: typeof e === "string" ? e : "Something went wrong." };
}

export interface Connection {
  profile: string;
  base_url: string;
  local: boolean;
  email: string | null;
  data_dir: string;
}

export interface ProfileInfo {
  name: string;
  base_url: string;
  current: boolean;
}

export interface Profiles {
  profiles: ProfileInfo[];
  keychain_problem: string | null;
}

export interface SampleRow {
  id: string;
  filename: string | null;
  size: number | null;
  created_at: string;
  visibility: string;
  project: string | null;
  tags: string[];
  classification: string | null;
}

export interface SamplesPage {
  rows: SampleRow[];
  total: number;
  page: number;
  per_page: number;
}

export interface Named {
  id: string;
  name: string;
}

export interface JobChoice {
  id: string;
  name: string;
  kind: string;
}

export interface Lookups {
  tags: Named[];
  projects: Named[];
  jobs: JobChoice[];
  platforms: string[];
  library_types: string[];
  sample_types: string[];
}

export const NO_LOOKUPS: Lookups = { tags: [], projects: [], jobs: [], platforms: [], library_types: [], sample_types: [] };

export interface AnalysisRow {
  id: string;
  kind: string;
  state: "running" | "complete" | "failed";
  error: string | null;
  created_at: string;
  job: string;
  tax_id: string | null;
  description: string | null;
}

export interface Metadata {
  name: string | null;
  description: string | null;
  external_sample_id: string | null;
  platform: string | null;
  library_type: string | null;
  sample_type: string | null;
  date_collected: string | null;
  location_string: string | null;
  starred: boolean;
  custom: Record<string, unknown>;
}

export interface SampleDetail {
  sample: SampleRow;
  metadata: Metadata | null;
  analyses: AnalysisRow[];
  editable: boolean;
}

export interface Chart {
  svg: string;
  bars: { label: string; tax_id: string | null; value: number }[];
}

export interface Marker {
  name: string;
  description: string;
  status: "present" | "probable" | "absent";
  length: number;
  identity?: number;
  coverage?: number;
  depth?: number;
  n_reads_exact_match?: number;
  n_reads_partial_match?: number;
}

export interface PanelView {
  panel_name: string;
  sub_panels: { name: string; description: string; markers: Marker[]; found: number }[];
}

export interface ChartOptions {
  rank: string;
  top_n: number;
  metric: "abundance" | "readcount";
}

export const api = {
  connection: () => invoke<Connection>("connection"),
  profiles: () => invoke<Profiles>("profiles"),
  addProfile: (profile: { name: string; base_url: string; api_key: string; store_key_in_file: boolean }) =>
    invoke<Profiles>("add_profile", { profile }),
  switchProfile: (name: string) => invoke<Profiles>("switch_profile", { name }),
  removeProfile: (name: string) => invoke<Profiles>("remove_profile", { name }),
  listSamples: (query: unknown) => invoke<SamplesPage>("list_samples", { query }),
  lookups: () => invoke<Lookups>("lookups"),
  sample: (id: string) => invoke<SampleDetail>("sample", { id }),
  leaveSample: () => invoke<void>("leave_sample"),
  jobArgs: (id: string) => invoke<JobArgs>("job_args", { id }),
  runJob: (sample: string, job: string, args: Record<string, unknown>, description: string | null) =>
    invoke<string>("run_job", { sample, job, args, description }),
  updateSample: (id: string, change: unknown) => invoke<SampleDetail>("update_sample", { id, change }),
  analysisResults: (id: string, kind: string) => invoke<unknown>("analysis_results", { id, kind }),
  downloadResults: (id: string, kind: string, fileName: string) =>
    invoke<string | null>("download_results", { id, kind, fileName }),
  createProject: (name: string) => invoke<Named>("create_project", { name }),
  changeSamples: (ids: string[], change: BulkChange) => invoke<BulkOutcome>("change_samples", { ids, change }),
  checkFiles: (paths: string[]) => invoke<FileCheck[]>("check_files", { paths }),
  pickFiles: (folder: boolean) => invoke<string[]>("pick_files", { folder }),
  startUploads: (batch: unknown) => invoke<void>("start_uploads", { batch }),
  cancelUpload: (id: string) => invoke<boolean>("cancel_upload", { id }),
  classification: (id: string) => invoke<{ n_reads: number; table: TaxonRow[] }>("classification", { id }),
  chart: (id: string, options: ChartOptions) => invoke<Chart>("abundance_chart", { id, options }),
  exportChart: (id: string, options: ChartOptions, format: "svg" | "png", fileName: string) =>
    invoke<string | null>("export_chart", { id, options, format, fileName }),
  saveCsv: (fileName: string, text: string) => invoke<string | null>("save_csv", { fileName, text }),
  panel: (id: string) => invoke<PanelView>("panel", { id }),
  watchView: () => invoke<WatchView>("watch_view"),
  pickWatchFolder: () => invoke<string | null>("pick_watch_folder"),
  addWatchFolder: (folder: NewFolder) => invoke<void>("add_watch_folder", { folder }),
  updateWatchFolder: (original: string, folder: NewFolder) => invoke<void>("update_watch_folder", { original, folder }),
  setUploadLimit: (limit: number | null) => invoke<void>("set_upload_limit", { limit }),
  removeWatchFolder: (path: string) => invoke<void>("remove_watch_folder", { path }),
  pauseWatching: (paused: boolean) => invoke<void>("pause_watching", { paused }),
};

export const events = {
  uploadProgress: (f: (e: ProgressEvent) => void): Promise<UnlistenFn> =>
    listen<ProgressEvent>("upload-progress", (e) => f(e.payload)),
  analysesChanged: (f: (e: { sample_id: string; analyses: AnalysisRow[] }) => void): Promise<UnlistenFn> =>
    listen<{ sample_id: string; analyses: AnalysisRow[] }>("analyses-changed", (e) => f(e.payload)),
  watchChanged: (f: (e: { kind: "progress" | "changed"; key: string | null; live: Live | null }) => void): Promise<UnlistenFn> =>
    listen<{ kind: "progress" | "changed"; key: string | null; live: Live | null }>("watch-changed", (e) => f(e.payload)),
  /** Files dropped anywhere on the window (Tauri's drag-and-drop events). */
  dragDrop: (onDrop: (paths: string[]) => void, onHover: (hovering: boolean) => void): Promise<UnlistenFn[]> =>
    Promise.all([
      listen<{ paths: string[] }>("tauri://drag-drop", (e) => {
        onHover(false);
        onDrop(e.payload.paths ?? []);
      }),
      listen("tauri://drag-enter", () => onHover(true)),
      listen("tauri://drag-leave", () => onHover(false)),
    ]),
};
