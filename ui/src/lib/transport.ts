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

/** Runs a command; rejects with `{code, message}` as the shell's commands do. */
export async function invoke<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  if (!inBrowser) return shellInvoke<T>(command, args);
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

/** Listens for a shell event; a browser has none (its screens ask again instead). */
export function listen<T>(event: string, handler: EventCallback<T>): Promise<UnlistenFn> {
  if (!inBrowser) return shellListen<T>(event, handler);
  return Promise.resolve(() => {});
}
