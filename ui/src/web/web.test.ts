import { describe as suite, expect, it } from "vitest";
import { WebError, browserName, describe } from "./web";

suite("the browser's words", () => {
  it("names a wait in seconds or minutes", () => {
    expect(describe(new WebError("too many", 429, 2))).toBe("Too many tries that did not match. Wait 2 seconds, then try again.");
    expect(describe(new WebError("too many", 429, 900))).toBe("Too many tries that did not match. Wait 15 minutes, then try again.");
  });
  it("makes the service's message a sentence", () => {
    expect(describe(new WebError("the current password is not right", 403))).toBe("The current password is not right.");
  });
  it("names browsers and systems", () => {
    expect(browserName("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36")).toBe(
      "Chromium or Chrome on Linux",
    );
    expect(browserName("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0")).toBe("Firefox on Windows");
    expect(browserName(null)).toBe("Unknown browser");
    expect(browserName("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1")).toBe(
      "Safari on iOS",
    );
  });
});

suite("password links", () => {
  it("are read from the fragment only when whole", async () => {
    const { linkToken } = await import("./web");
    const t = "a".repeat(64);
    expect(linkToken(`#link=${t}`)).toBe(t);
    expect(linkToken(`#link=${t}x`)).toBeNull();
    expect(linkToken("#link=zz")).toBeNull();
    expect(linkToken("")).toBeNull();
  });
});
