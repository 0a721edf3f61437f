import type { PolicyStatus } from "./policies.js";

/** One run of one arm on one (task, seed), as the export records it. */
export interface RunRecord {
  task: string;
  seed: number;
  arm: string;
  policy: string;
  /** The arm's verdict under its policy: SUCCESS, ESCALATED (a graded failure), TOOL_FAILURE (execution). */
  status: PolicyStatus;
  reason: string;
  /** The loopgate run's own envelope status (the same run may be judged by several arms). */
  run_status: PolicyStatus | null;
  run_id: string | null;
  /** The arm whose run this arm judged (`from`), else null. */
  judged_run_of: string | null;
  attempts: number;
  gates_failed: string[];
  blocking_findings: string[];
  claim: string | null;
  store: string;
  duration_ms: number;
}

/** Treatment against control on one (task, seed); unpaired when either side is an execution failure or missing. */
export type PairedOutcome = "improved" | "regressed" | "tied" | "unpaired";

/** The paired outcome of one treatment run against its control run. */
export function pairedOutcome(
  control: PolicyStatus | null | undefined,
  treatment: PolicyStatus | null | undefined,
): PairedOutcome {
  if (!control || !treatment || control === "TOOL_FAILURE" || treatment === "TOOL_FAILURE") return "unpaired";
  const c = control === "SUCCESS";
  const t = treatment === "SUCCESS";
  if (t === c) return "tied";
  return t ? "improved" : "regressed";
}

/** Every arm's status on one (task, seed), and each treatment's outcome against the control. */
export interface Pair {
  task: string;
  seed: number;
  status: Record<string, PolicyStatus | null>;
  outcome: Record<string, PairedOutcome>;
}

/** Groups runs by (task, seed), in the order tasks and seeds were given. */
export function pairRuns(
  records: readonly RunRecord[],
  arms: readonly string[],
  control: string,
  tasks: readonly string[],
  seeds: number,
): Pair[] {
  const key = (task: string, seed: number, arm: string) => `${task}\u0000${seed}\u0000${arm}`;
  const byKey = new Map(records.map((r) => [key(r.task, r.seed, r.arm), r]));
  const pairs: Pair[] = [];
  for (const task of tasks)
    for (let seed = 1; seed <= seeds; seed++) {
      const status: Record<string, PolicyStatus | null> = {};
      for (const arm of arms) status[arm] = byKey.get(key(task, seed, arm))?.status ?? null;
      const outcome: Record<string, PairedOutcome> = {};
      for (const arm of arms) if (arm !== control) outcome[arm] = pairedOutcome(status[control], status[arm]);
      pairs.push({ task, seed, status, outcome });
    }
  return pairs;
}

/** Counts of one arm's verdicts; execution failures are kept apart from graded failures. */
export interface ArmCounts {
  runs: number;
  SUCCESS: number;
  ESCALATED: number;
  TOOL_FAILURE: number;
}

/** Counts of one treatment's paired outcomes against the control. */
export interface PairedCounts {
  pairs: number;
  improved: number;
  regressed: number;
  tied: number;
  unpaired: number;
}

/** The summary of an experiment: per-arm counts and per-treatment paired counts. */
export interface ExperimentSummary {
  control: string;
  arms: Record<string, ArmCounts>;
  paired: Record<string, PairedCounts>;
}

/** Sums run verdicts per arm and paired outcomes per treatment. */
export function summarize(
  records: readonly RunRecord[],
  pairs: readonly Pair[],
  arms: readonly string[],
  control: string,
): ExperimentSummary {
  const armCounts: Record<string, ArmCounts> = {};
  for (const arm of arms) armCounts[arm] = { runs: 0, SUCCESS: 0, ESCALATED: 0, TOOL_FAILURE: 0 };
  for (const r of records) {
    const c = armCounts[r.arm];
    if (!c) continue;
    c.runs++;
    c[r.status]++;
  }
  const paired: Record<string, PairedCounts> = {};
  for (const arm of arms) {
    if (arm === control) continue;
    const c: PairedCounts = { pairs: 0, improved: 0, regressed: 0, tied: 0, unpaired: 0 };
    for (const p of pairs) {
      const o = p.outcome[arm];
      if (!o) continue;
      c.pairs++;
      c[o]++;
    }
    paired[arm] = c;
  }
  return { control, arms: armCounts, paired };
}
