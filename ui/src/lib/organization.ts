// The Organisation screen's words: roles as people say them, and each user's state.
import type { OrgRole, UserRow } from "./bindings";
import { formatDate } from "./format";

export type { LinkView, OrganizationView, OrgRole, UserChange, UserRow } from "./bindings";

/** Roles as the screen names them. */
export const ROLE_NAME: Record<OrgRole, string> = { owner: "Owner", admin: "Admin", member: "Member" };

/** "a" or "an" before a role's name. */
export function article(role: OrgRole): string {
  return role === "member" ? "a" : "an";
}

/** What each role may do, in one line (the README's table says it in full). */
export const ROLE_MEANS: Record<OrgRole, string> = {
  member: "works on their own samples, documents and projects, and on what others share with them",
  admin: "also sees and manages every sample, document and project of the organisation, and manages members",
  owner: "also manages admins and other owners, and gives roles",
};

/** A user's state in words: disabled, invited and not yet joined, or active (last seen). */
export function userState(u: UserRow, now: Date = new Date()): { text: string; tone: "bad" | "wait" | "ok" } {
  if (u.disabled_at) return { text: `Disabled since ${shortDate(u.disabled_at)}`, tone: "bad" };
  if (u.link_expires_at && !u.has_password) {
    const ends = new Date(u.link_expires_at);
    if (ends > now) return { text: `Invited; the link works until ${shortDate(u.link_expires_at)}`, tone: "wait" };
    return { text: "Invited; the link has ended", tone: "wait" };
  }
  if (u.link_expires_at) return { text: `Password reset link open until ${shortDate(u.link_expires_at)}`, tone: "wait" };
  if (u.last_seen_at) return { text: `Active; last seen ${shortDate(u.last_seen_at)}`, tone: "ok" };
  return { text: u.has_password ? "Active; not signed in from a browser yet" : "Active (API key only)", tone: "ok" };
}

const shortDate = (iso: string) => formatDate(iso);

/** Problems with an e-mail address typed to invite someone; null if it looks right. */
export function inviteProblem(email: string): string | null {
  const e = email.trim();
  if (!e) return "Type the person's e-mail address.";
  const at = e.indexOf("@");
  if (at <= 0 || at === e.length - 1 || /\s/.test(e)) return "That does not look like an e-mail address.";
  return null;
}

/** The largest logo the service keeps, in bytes (2 MiB). */
export const LOGO_MAX_BYTES = 2 * 1024 * 1024;

/** Why a picked file cannot be the logo, before it is sent; null when it may be. */
export function logoProblem(file: { name: string; size: number; type: string }): string | null {
  const name = file.name.toLowerCase();
  const picture = ["image/png", "image/jpeg", "image/svg+xml"].includes(file.type) || /\.(png|jpe?g|svg)$/.test(name);
  if (!picture) return `${file.name} is not a PNG, JPEG or SVG picture.`;
  if (file.size > LOGO_MAX_BYTES) return `${file.name} is larger than 2 MiB: choose a smaller picture.`;
  if (file.size === 0) return `${file.name} is empty.`;
  return null;
}

/** A file's bytes as base64 (what the commands carry). */
export function readAsBase64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => {
      const url = String(r.result);
      resolve(url.slice(url.indexOf(",") + 1));
    };
    r.onerror = () => reject(new Error("The picture could not be read; choose the file again."));
    r.readAsDataURL(file);
  });
}
