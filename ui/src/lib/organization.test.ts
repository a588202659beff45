import { describe, expect, it } from "vitest";
import { LOGO_MAX_BYTES, inviteProblem, logoProblem, userState } from "./organization";
import type { UserRow } from "./bindings";

const base: UserRow = {
  id: "u1",
  email: "a@lab.org",
  role: "member",
  created_at: "2026-01-01T00:00:00Z",
  disabled_at: null,
  has_password: true,
  link_expires_at: null,
  last_seen_at: null,
  me: false,
  manageable: true,
  roles: ["member"],
};

describe("user states", () => {
  const now = new Date("2026-06-01T00:00:00Z");
  it("names a disabled account first, whatever else holds", () => {
    const s = userState({ ...base, disabled_at: "2026-05-01T00:00:00Z", last_seen_at: "2026-05-02T00:00:00Z" }, now);
    expect(s.tone).toBe("bad");
    expect(s.text).toMatch(/^Disabled since/);
  });
  it("tells an open invitation from one that ended", () => {
    expect(userState({ ...base, has_password: false, link_expires_at: "2026-06-05T00:00:00Z" }, now).text).toMatch(/^Invited; the link works until/);
    expect(userState({ ...base, has_password: false, link_expires_at: "2026-05-05T00:00:00Z" }, now).text).toBe("Invited; the link has ended");
  });
  it("says how an active user signs in", () => {
    expect(userState({ ...base, has_password: false }, now).text).toBe("Active (API key only)");
    expect(userState(base, now).text).toBe("Active; not signed in from a browser yet");
    expect(userState({ ...base, link_expires_at: "2026-06-02T00:00:00Z" }, now).text).toMatch(/^Password reset link open/);
  });
});

describe("invitations", () => {
  it("need an address", () => {
    expect(inviteProblem("")).toMatch(/Type/);
    expect(inviteProblem("lab.org")).toMatch(/does not look/);
    expect(inviteProblem("a b@lab.org")).toMatch(/does not look/);
    expect(inviteProblem(" new@lab.org ")).toBeNull();
  });
});

describe("logoProblem", () => {
  it("takes PNG, JPEG and SVG pictures of at most 2 MiB, by type or name", () => {
    expect(logoProblem({ name: "lab.png", size: 1000, type: "image/png" })).toBeNull();
    expect(logoProblem({ name: "LAB.JPG", size: 1000, type: "" })).toBeNull();
    expect(logoProblem({ name: "lab.svg", size: LOGO_MAX_BYTES, type: "image/svg+xml" })).toBeNull();
  });
  it("names the file and what is wrong", () => {
    expect(logoProblem({ name: "lab.gif", size: 10, type: "image/gif" })).toBe("lab.gif is not a PNG, JPEG or SVG picture.");
    expect(logoProblem({ name: "big.png", size: LOGO_MAX_BYTES + 1, type: "image/png" })).toContain("larger than 2 MiB");
    expect(logoProblem({ name: "empty.png", size: 0, type: "image/png" })).toBe("empty.png is empty.");
  });
});
