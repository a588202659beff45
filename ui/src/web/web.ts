// MGDS in a browser: the service's own routes for signing in, the session and the account
// (README, "Signing in from a browser"). Addresses are relative to the page's <base>, which the
// service sets to its public path. Every write sends the session's CSRF token; every request
// says it comes from a page (X-Requested-With), so a 401 never opens the browser's own dialog.
import { setCsrfToken } from "../lib/transport";

/** The signed-in account, as `GET /api/v1/account` answers it. */
export type Account = {
  email?: string | null;
  username?: string | null;
  organization?: string | null;
  organization_admin?: boolean | null;
  role?: "member" | "admin" | "owner" | null;
  created_at?: string | null;
};

/** What a password link (an invitation, or a reset an admin made) is for. */
export type LinkInfo = { email: string; organization: string; kind: "invitation" | "reset"; expires_at: string };

/** The session of this browser. */
export type SessionInfo = { user: Account; session: string; csrf_token: string; expires_at: string };

/** The service's single sign-on, when it has one (`GET /api/v1/sso`). */
export type SsoInfo = { name: string; issuer: string; sign_in: string };

/** The reason a sign-in at the provider was refused, as the service put it in the address
 *  (`#sign_in_problem=…`), if there is one. */
export function signInProblem(hash: string): string | null {
  if (!hash.startsWith("#sign_in_problem=")) return null;
  const said = new URLSearchParams(hash.slice(1)).get("sign_in_problem");
  return said ? said.slice(0, 600) : null;
}

/** One of the user's sessions. */
export type SessionRow = {
  id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  user_agent: string | null;
  address: string | null;
  current: boolean;
};

/** A refusal of the service, in its words, with the status and any wait. */
export class WebError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

let csrf = "";

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { "X-Requested-With": "mgds" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && csrf) headers["X-CSRF-Token"] = csrf;
  let r: Response;
  try {
    r = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      cache: "no-store",
    });
  } catch {
    throw new WebError("The service cannot be reached. Check your network, then try again.", 0);
  }
  if (r.status === 204) return undefined as T;
  if (r.ok && !(r.headers.get("content-type") ?? "").includes("application/json")) {
    // An HTML page where JSON was asked for: the address does not reach the service's API (a
    // proxy in between serves something else there).
    throw new WebError("The service's address answered a page instead of its API; ask your administrator to check the proxy.", r.status);
  }
  const text = await r.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!r.ok) {
    const said = json && typeof json === "object" && "message" in json ? String((json as { message: unknown }).message) : "";
    const wait = Number(r.headers.get("retry-after"));
    throw new WebError(said || `The service answered ${r.status}.`, r.status, Number.isFinite(wait) && wait > 0 ? wait : null);
  }
  return json as T;
}

/** A refusal in words for the page. */
export function describe(e: unknown): string {
  if (e instanceof WebError) {
    if (e.status === 429 && e.retryAfter) {
      const s = e.retryAfter;
      const wait = s >= 120 ? `${Math.ceil(s / 60)} minutes` : `${s} second${s === 1 ? "" : "s"}`;
      return `Too many tries that did not match. Wait ${wait}, then try again.`;
    }
    const m = e.message.trim();
    return m.charAt(0).toUpperCase() + m.slice(1) + (/[.!?]$/.test(m) ? "" : ".");
  }
  return "Something went wrong; try again.";
}

function keep(s: SessionInfo): SessionInfo {
  csrf = s.csrf_token;
  setCsrfToken(s.csrf_token);
  return s;
}

/** The secret of a password link in the page's address (`#link=…`), if there is one. */
export function linkToken(hash: string): string | null {
  const m = /^#link=([0-9a-f]{64})$/.exec(hash.trim());
  return m ? m[1] : null;
}

export const web = {
  /** What a password link is for (the secret goes in the body, never in an address). */
  linkInfo: (token: string) => call<LinkInfo>("POST", "api/v1/password_link", { token }),
  /** Sets the password with a link, which signs this browser in. */
  useLink: async (token: string, password: string) =>
    keep(await call<SessionInfo>("POST", "api/v1/password_link/use", { token, password })),
  /** This browser's session; a 401 when it is not signed in. */
  session: async () => keep(await call<SessionInfo>("GET", "api/v1/session")),
  signIn: async (email: string, password: string) =>
    keep(await call<SessionInfo>("POST", "api/v1/sign_in", { email, password })),
  /** The service's single sign-on; `null` when it has none. */
  sso: async (): Promise<SsoInfo | null> => {
    try {
      return await call<SsoInfo>("GET", "api/v1/sso");
    } catch (e) {
      if (e instanceof WebError && e.status === 404) return null;
      throw e;
    }
  },
  /** Where single sign-on starts for this page (the service sends the browser on). */
  ssoSignInAddress: (returnTo = "/") => `api/v1/sso/sign_in?return_to=${encodeURIComponent(returnTo)}`,
  /** Signs this browser out; the address that ends the provider's session too, when single
   *  sign-on made this one. */
  signOut: async (): Promise<string | null> => {
    const said = await call<{ end_session_url?: string } | undefined>("DELETE", "api/v1/session");
    csrf = "";
    return said?.end_session_url ?? null;
  },
  sessions: () => call<SessionRow[]>("GET", "api/v1/sessions"),
  endSession: (id: string) => call<void>("DELETE", `api/v1/sessions/${encodeURIComponent(id)}`),
  endAll: async () => {
    const ended = await call<{ ended: number }>("DELETE", "api/v1/sessions");
    csrf = "";
    return ended;
  },
  changePassword: async (current: string, next: string) => {
    await call<void>("POST", "api/v1/account/password", { current_password: current, new_password: next });
    csrf = "";
  },
  newApiKey: (password: string) =>
    call<{ api_key: string; canceled_uploads: number }>("POST", "api/v1/account/api_key", { current_password: password }),
};

/** The browser a session was made from, in a few words, from its user agent. */
export function browserName(agent: string | null): string {
  if (!agent) return "Unknown browser";
  const browser =
    /Edg\//.test(agent) ? "Edge" : /Firefox\//.test(agent) ? "Firefox" : /Chrom(e|ium)\//.test(agent) ? "Chromium or Chrome" : /Safari\//.test(agent) ? "Safari" : null;
  const system = /Windows/.test(agent)
    ? "Windows"
    : /iPhone|iPad/.test(agent)
      ? "iOS"
      : /Mac OS X|Macintosh/.test(agent)
        ? "macOS"
        : /Android/.test(agent)
          ? "Android"
          : /Linux/.test(agent)
            ? "Linux"
            : null;
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? agent.slice(0, 60);
}
