import { describe, expect, it } from "vitest";
import { formatBytes, formatCount, formatDuration, formatPercent, formatSpeed, plural } from "./format";

describe("format", () => {
  it("sizes read like a file manager", () => {
    expect(formatBytes(1)).toBe("1 byte");
    expect(formatBytes(999)).toBe("999 bytes");
    expect(formatBytes(1_400_000)).toBe("1.4 MB");
    expect(formatBytes(250_000_000_000)).toBe("250 GB");
    expect(formatBytes(null)).toBe("—");
  });
  it("counts, percentages and plurals", () => {
    expect(formatCount(12345)).toBe("12,345");
    expect(formatPercent(0.1234)).toBe("12.3%");
    expect(formatPercent(0.01234)).toBe("1.23%");
    expect(formatPercent(0.00000001)).toBe("<0.01%");
    expect(formatPercent(null)).toBe("—");
    expect(plural(1, "sample")).toBe("1 sample");
    expect(plural(10000, "sample")).toBe("10,000 samples");
  });
  it("durations and speeds", () => {
    expect(formatDuration(45)).toBe("45 s");
    expect(formatDuration(200)).toBe("3 min 20 s");
    expect(formatDuration(3900)).toBe("1 h 5 min");
    expect(formatDuration(-1)).toBe("—");
    expect(formatSpeed(12_300_000)).toBe("12.3 MB/s");
    expect(formatSpeed(0)).toBe("—");
  });
});
