import { type StepHealth, stepHealth } from "../../core/agent/step-appraisal.js";
import { openStore, storeFrom } from "../output/context.js";
import type { CommandIO } from "../output/io.js";

/** A rate as printed: a percentage with its denominator, or "—" when there is no denominator (never 0). */
export function formatRate(rate: number | null, denominator: number, of: string): string {
  if (rate === null) return `— (no ${of})`;
  return `${(rate * 100).toFixed(1)}% of ${denominator} ${of}`;
}

/** `loopgate health`: the plan-step counters over the store's runs (optionally the last N days). */
export async function healthCommand(
  io: CommandIO,
  flags: { store?: string; json?: boolean; days?: number },
  now: () => Date = () => new Date(),
): Promise<number> {
  const days = flags.days;
  const where = storeFrom(flags.store);
  const store = await openStore(where, "read");
  try {
    const since = days === undefined ? null : now().getTime() - days * 86_400_000;
    const streams = (await store.listStreams({ prefix: "run-" })).filter(
      (s) => since === null || Date.parse(s.firstAt) >= since,
    );
    const runs = [];
    for (const s of streams) runs.push(await store.readStream(s.stream));
    const h: StepHealth & { days: number | null } = { ...stepHealth(runs), days: days ?? null };
    if (flags.json) io.out(`${JSON.stringify(h, null, 2)}\n`);
    else
      io.out(
        `${[
          `runs: ${h.runs}${days !== undefined ? ` (last ${days} days)` : ""}`,
          `step completions: ${h.step_completions} (measured ${h.step_measured}, null ${h.step_nulls})`,
          `steps reopened: ${h.step_reopens}`,
          `null-step rate: ${formatRate(h.step_null_rate, h.step_null_rate_denominator, "runs with a measured completion")}`,
          `reopen rate: ${formatRate(h.step_reopen_rate, h.step_reopen_rate_denominator, "runs that completed or reopened a step")}`,
        ].join("\n")}\n`,
      );
    return 0;
  } finally {
    await store.close();
  }
}
