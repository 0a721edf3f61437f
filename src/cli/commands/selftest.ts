import { defaultContext } from "../../selftest/check.js";
import { runSelftest, type SelftestReport } from "../../selftest/run-selftest.js";
import { DIMENSIONS } from "../../selftest/verdict.js";
import type { CommandIO } from "../output/io.js";

const titleOf = (id: string) => DIMENSIONS.find((d) => d.id === id)?.title ?? id;
const seconds = (ms: number | undefined) => `${((ms ?? 0) / 1000).toFixed(1)} s`;

/** The report as a table: dimension, state, score/ceiling, and every check that did not pass. */
export function formatSelftest(r: SelftestReport): string {
  const w = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n));
  const lines = [`${w("dimension", 26)} ${w("state", 15)} ${"score".padStart(7)}  failing checks`];
  for (const d of r.dimensions) {
    const bad = d.checks.filter((c) => c.ok !== true);
    const notes = [
      ...(d.error ? [`error: ${d.error}`] : []),
      ...bad.map((c) => `${c.ok === false ? "✗" : "?"} ${c.name}: ${c.detail}`),
    ];
    const score = `${d.score}/${d.ceiling}`.padStart(7);
    lines.push(`${w(titleOf(d.id), 26)} ${w(d.state, 15)} ${score}  ${notes[0] ?? ""}`);
    for (const n of notes.slice(1)) lines.push(`${"".padEnd(51)}${n}`);
  }
  lines.push(
    "",
    `total ${r.total}/${r.ceiling} (${r.percent}%) → ${r.verdict} (exit ${r.exit_code}) in ${seconds(r.duration_ms)}`,
  );
  if (r.reasons.length) lines.push(`why not READY: ${r.reasons.join("; ")}`);
  if (r.verdict === "READY_WITH_CAVEATS")
    lines.push(
      "READY_WITH_CAVEATS: nothing failed; what is listed above could not be measured here (often the live " +
        "dimension, without a provider key), and unmeasured never counts as passed. loopgate is usable.",
    );
  return `${lines.join("\n")}\n`;
}

/** `loopgate selftest [--json]`: measures this installation without a model call (unless a provider is configured). */
export async function selftestCommand(
  io: CommandIO,
  flags: { json?: boolean },
  help: string,
): Promise<number> {
  const ctx = defaultContext(help);
  io.err(
    `loopgate selftest: ${DIMENSIONS.length} dimensions, no paid model call unless a provider is configured\n`,
  );
  const report = await runSelftest(ctx, {
    started: (_id, title) => io.err(`  ${title} …\n`),
    finished: (d) =>
      io.err(`  ${titleOf(d.id)}: ${d.state} ${d.score}/${d.ceiling} (${seconds(d.duration_ms)})\n`),
  });
  io.out(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatSelftest(report));
  return report.exit_code;
}
