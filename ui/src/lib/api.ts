// The shell's commands and events for the components. Their types and calls are generated from
// the Rust code (`./bindings`); this adds errors in words, and the window's own drag-and-drop events.
import { listen, type UnlistenFn } from "./transport";
import { commands, events as shellEvents, type CmdError, type Lookups } from "./bindings";

export type {
  AnalysisRow,
  ChartControls,
  ChartView,
  ConnectionView,
  JobChoice,
  Lookups,
  Marker,
  MetadataInput,
  Named,
  NewProfile,
  PanelView,
  ProfilesView,
  SampleChange,
  SampleDetail,
  SamplesPage,
  Visibility,
} from "./bindings";

/** A command's rejection (the shell's `CmdError`), or any other failure, as `{code, message}`. */
export type AppError = CmdError;

/** Any rejection as {code, message}, in words for people. */
export function asError(e: unknown): AppError {
  if (e && typeof e === "object" && "message" in e) {
    const o = e as { code?: unknown; message: unknown };
    return { code: typeof o.code === "string" ? o.code : "failed", message: String(o.message) };
  }
  return { code: "failed", message: typeof e === "string" ? e : "Something went wrong." };
}

export const NO_LOOKUPS: Lookups = { tags: [], projects: [], jobs: [], platforms: [], library_types: [], sample_types: [] };

/** The shell's commands; each rejects with a `CmdError` (see `asError`). */
export const api = commands;

export const events = {
  ...shellEvents,
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
