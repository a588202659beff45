// Numbers, sizes, dates and durations as a lab scientist reads them.

const UNITS = ["bytes", "KB", "MB", "GB", "TB"];

/** A size in bytes, e.g. "1.4 MB" (decimal units, as file managers show them). */
export function formatBytes(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n)) return "—";
  if (n < 1000) return `${n} ${n === 1 ? "byte" : "bytes"}`;
  let v = n;
  let u = 0;
  while (v >= 1000 && u < UNITS.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${UNITS[u]}`;
}

/** A count with thousands separators, e.g. "12,345". */
export function formatCount(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n)) return "—";
  return Math.round(n).toLocaleString("en-US");
}

/** A fraction (0..1) as a percentage with sensible precision. */
export function formatPercent(f: number | null | undefined): string {
  if (f == null || !Number.isFinite(f)) return "—";
  const p = f * 100;
  if (p === 0) return "0%";
  if (p < 0.01) return "<0.01%";
  return `${p < 10 ? p.toFixed(2) : p.toFixed(1)}%`;
}

/** An RFC 3339 time as "23 Nov 2026, 16:42" in local time; "—" if absent or invalid. */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const hh = String(d.getHours()).padStart(2, "0");
  const mm = String(d.getMinutes()).padStart(2, "0");
  return `${d.getDate()} ${months[d.getMonth()]} ${d.getFullYear()}, ${hh}:${mm}`;
}

/** A duration in seconds as "45 s", "3 min 20 s" or "1 h 5 min". */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds == null || !Number.isFinite(seconds) || seconds < 0) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
}

/** A transfer speed in bytes per second, e.g. "12.3 MB/s". */
export function formatSpeed(bytesPerSecond: number | null | undefined): string {
  if (bytesPerSecond == null || !Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return "—";
  return `${formatBytes(bytesPerSecond)}/s`;
}

/** "1 sample", "2 samples". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}
