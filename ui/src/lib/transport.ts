// How the screens reach what they ask for: in MGDS Desktop's window, the shell's commands and
// events (Tauri); in a browser, the same commands over HTTP from the lab's service
// (`POST api/web/v1/commands/{name}`, signed in with the browser's session and its CSRF token).
// The screens do not know which: `bindings.ts` calls `invoke` and `listen` from here.
import { invoke as shellInvoke } from "@tauri-apps/api/core";
import { listen as shellListen, type EventCallback, type UnlistenFn } from "@tauri-apps/api/event";

export type { UnlistenFn };

/** Whether the screens run in a browser (not in MGDS Desktop's window). */
export const inBrowser = typeof window !== "undefined" && !("__TAURI_INTERNALS__" in window);

let csrf = "";
let sessionEnded: (() => void) | null = null;

/** The session's CSRF token, sent with every command (set when the browser signs in). */
export function setCsrfToken(token: string) {
  csrf = token;
}

/** What to do when the service says the browser's session has ended (signed out elsewhere,
 *  unused too long, a new password): the page goes back to signing in. */
export function onSessionEnded(handler: () => void) {
  sessionEnded = handler;
}

type LocalCommand = (args: Record<string, unknown>) => Promise<unknown>;
const local = new Map<string, LocalCommand>();
const handlers = new Map<string, Set<EventCallback<unknown>>>();

/** In a browser, commands the page runs itself (what needs the files the user gave it, and
 *  following what the desktop's shell follows): `invoke` calls these instead of the service. */
export function provideLocally(commands: Record<string, LocalCommand>) {
  for (const [name, run] of Object.entries(commands)) local.set(name, run);
}

/** In a browser, sends an event to the screens' listeners, as the desktop's shell does. */
export function emitLocally<T>(event: string, payload: T) {
  for (const h of handlers.get(event) ?? []) h({ event, id: 0, payload } as Parameters<EventCallback<unknown>>[0]);
}

/** Runs a command; rejects with `{code, message}` as the shell's commands do. */
export async function invoke<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  if (!inBrowser) return shellInvoke<T>(command, args);
  const mine = local.get(command);
  if (mine) return (await mine(args ?? {})) as T;
  return serviceCommand<T>(command, args);
}

/** Runs a command on the service (in a browser). */
export async function serviceCommand<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  let r: Response;
  try {
    r = await fetch(`api/web/v1/commands/${command}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, "X-Requested-With": "mgds" },
      body: JSON.stringify(args ?? {}),
      credentials: "same-origin",
      cache: "no-store",
    });
  } catch {
    throw { code: "unreachable", message: "The service cannot be reached. Check your network, then try again." };
  }
  let body: unknown = null;
  try {
    body = await r.json();
  } catch {
    body = null;
  }
  if (r.status === 401 && sessionEnded) {
    sessionEnded();
    throw { code: "signed_out", message: "Your session has ended; sign in again." };
  }
  if (!r.ok) {
    if (body && typeof body === "object" && "message" in body) throw body;
    throw { code: "failed", message: `The service answered ${r.status}.` };
  }
  return body as T;
}

/** Listens for a shell event; in a browser, for those the page sends itself (`emitLocally`). */
export function listen<T>(event: string, handler: EventCallback<T>): Promise<UnlistenFn> {
  if (!inBrowser) return shellListen<T>(event, handler);
  const set = handlers.get(event) ?? new Set();
  handlers.set(event, set);
  const h = handler as EventCallback<unknown>;
  set.add(h);
  return Promise.resolve(() => set.delete(h));
}
