/** One benchmark figure, loopgate against a baseline measured in the same run. */
export interface BenchResult {
  metric: string;
  unit: string;
  loopgate: number;
  baseline: number;
  /** loopgate / baseline. */
  ratio: number;
  /** The goal in words, e.g. "≥ 0.5× raw". */
  target: string;
  met: boolean;
  note?: string;
}

/** Formats results as a plain-text table for a terminal. */
export function formatBenchTable(results: readonly BenchResult[]): string {
  const head = ["metric", "unit", "loopgate", "baseline", "ratio", "target", "met", "note"];
  const rows = results.map((r) => [
    r.metric,
    r.unit,
    Math.round(r.loopgate).toLocaleString("en-US"),
    Math.round(r.baseline).toLocaleString("en-US"),
    r.ratio.toFixed(2),
    r.target,
    r.met ? "yes" : "NO",
    r.note ?? "",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
