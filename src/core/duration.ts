/** Parses "500ms", "30s", "5m", "1h" or a bare number of seconds into milliseconds; null when malformed. */
export function parseDuration(value: string | number): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? Math.round(value * 1000) : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = m[2] ?? "s";
  const factor = unit === "ms" ? 1 : unit === "s" ? 1000 : unit === "m" ? 60_000 : 3_600_000;
  const ms = Math.round(n * factor);
  return ms > 0 ? ms : null;
}
