import type { ExperimentExport } from "./run-experiment.js";

/** Lays out rows as aligned columns; the first row is the header. */
export function formatColumns(rows: readonly (readonly string[])[], rightAlignFrom = 1): string {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, [...c].length);
    });
  const pad = (c: string, i: number) => {
    const fill = " ".repeat((widths[i] ?? 0) - [...c].length);
    return i >= rightAlignFrom ? fill + c : c + fill;
  };
  const lines = rows.map((row) => row.map(pad).join("  ").trimEnd());
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [lines[0], rule, ...lines.slice(1)].join("\n");
}

/** The printed report of an experiment: counts per arm, then paired outcomes against the control. */
export function formatExperimentReport(x: ExperimentExport): string {
  const out: string[] = [];
  const runs = x.tasks.length * x.seeds * x.arms.length;
  out.push(
    `experiment ${x.name}: ${x.arms.length} arms × ${x.tasks.length} tasks × ${x.seeds} seeds = ${runs} results in ${(x.duration_ms / 1000).toFixed(1)} s${x.interrupted ? " (INTERRUPTED: missing runs are unpaired)" : ""}`,
  );
  out.push("");
  const armRows = x.arms.map((a) => {
    const c = x.summary.arms[a.id] ?? { runs: 0, SUCCESS: 0, ESCALATED: 0, TOOL_FAILURE: 0 };
    return [
      a.id + (a.id === x.control ? " (control)" : ""),
      a.policy + (a.from ? ` on ${a.from}'s runs` : ""),
      String(c.SUCCESS),
      String(c.ESCALATED),
      String(c.TOOL_FAILURE),
      String(c.runs),
    ];
  });
  out.push(
    formatColumns(
      [["arm", "policy", "SUCCESS", "ESCALATED (graded)", "TOOL_FAILURE (execution)", "runs"], ...armRows],
      2,
    ),
  );
  const treatments = x.arms.filter((a) => a.id !== x.control);
  if (treatments.length) {
    out.push("");
    out.push(
      `paired by (task, seed) against ${x.control}; unpaired = an execution failure or a missing run:`,
    );
    const rows = treatments.map((a) => {
      const p = x.summary.paired[a.id] ?? { pairs: 0, improved: 0, regressed: 0, tied: 0, unpaired: 0 };
      return [
        a.id,
        String(p.improved),
        String(p.regressed),
        String(p.tied),
        String(p.unpaired),
        String(p.pairs),
      ];
    });
    out.push(formatColumns([["treatment", "improved", "regressed", "tied", "unpaired", "pairs"], ...rows]));
  }
  out.push("");
  out.push("per task (SUCCESS / ESCALATED / TOOL_FAILURE per arm over seeds):");
  const taskRows = x.tasks.map((t) => [
    t.id,
    ...x.arms.map((a) => {
      const mine = x.runs.filter((r) => r.task === t.id && r.arm === a.id);
      const n = (s: string) => mine.filter((r) => r.status === s).length;
      return `${n("SUCCESS")}/${n("ESCALATED")}/${n("TOOL_FAILURE")}`;
    }),
  ]);
  out.push(formatColumns([["task", ...x.arms.map((a) => a.id)], ...taskRows]));
  out.push("");
  out.push(`export: ${x.out_dir}/experiment.json`);
  return `${out.join("\n")}\n`;
}
