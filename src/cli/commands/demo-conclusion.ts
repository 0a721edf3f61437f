/** One row of `loopgate demo`: a run of one example with one builder, and what the evidence said. */
export interface DemoRow {
  task: string;
  builder: string;
  expected: "SUCCESS" | "not SUCCESS";
  status: string;
  attempts: number;
  why: string;
  ok: boolean;
  run_id: string;
  /** Gate runs recorded over all attempts, and how many of them did not pass. */
  gates_run: number;
  gates_failed: number;
  reason: string;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * The demo's closing sentences, computed from what happened: held-out gates are credited only for
 * refusals they made (a forger's run in which gates ran and failed), and a run that could not execute
 * (TOOL_FAILURE) is named as such, never counted as expected.
 */
export function demoConclusion(rows: readonly DemoRow[]): string {
  const good = rows.filter((r) => r.ok).length;
  const out = [`${good}/${rows.length} runs ended as expected.`];
  const forgers = rows.filter((r) => r.expected === "not SUCCESS");
  const refused = forgers.filter((r) => r.status === "ESCALATED" && r.gates_failed > 0);
  if (forgers.length > 0 && refused.length === forgers.length)
    out.push(`Forged "done" claims were refused by held-out gates, not by reading the claim.`);
  else if (refused.length > 0)
    out.push(
      `${refused.length} of ${plural(forgers.length, "forged run")} were refused by failing gates; the others did not reach their gates.`,
    );
  const failures = rows.filter((r) => r.status === "TOOL_FAILURE");
  if (failures.length > 0) {
    const first = failures[0] as DemoRow;
    out.push(
      `${plural(failures.length, "run")} could not execute (TOOL_FAILURE), which proves nothing either way; the first: ${first.task} · ${first.builder}: ${first.reason.slice(0, 300)}`,
    );
  }
  return out.join(" ");
}
