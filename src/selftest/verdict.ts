// The self-test's verdict, derived by a pure function (no I/O, no clock): dimension results in,
// verdict out. Nothing here judges; it counts.

/** The state of one dimension. Only PASS is a pass; every other state is inconclusive or worse. */
export type DimensionState = "PASS" | "FAIL" | "NOT_VERIFIABLE" | "ERROR";

/** One check of a dimension: `ok` true passed, false failed, null could not be verified here. */
export interface Check {
  name: string;
  ok: boolean | null;
  detail: string;
}

/** What one dimension reports. */
export interface DimensionResult {
  id: string;
  state: DimensionState;
  score: number;
  ceiling: number;
  checks: Check[];
  /** Why the dimension could not run (state ERROR). */
  error?: string;
  /** How long it took (set by the runner). */
  duration_ms?: number;
}

export type Verdict = "READY" | "READY_WITH_CAVEATS" | "NOT_READY";

/** The derived verdict over every dimension. */
export interface VerdictSummary {
  verdict: Verdict;
  total: number;
  ceiling: number;
  /** total / ceiling × 100, one decimal. */
  percent: number;
  exit_code: 0 | 1 | 2;
  /** The dimensions as scored: states re-derived from their checks, scores clamped to their fixed ceilings. */
  dimensions: DimensionResult[];
  /** Why the verdict is not READY (empty when it is). */
  reasons: string[];
}

/** The six dimensions and their fixed ceilings (sum 100). A dimension that did not run still counts here. */
export const DIMENSIONS = [
  { id: "contracts", title: "deterministic contracts", ceiling: 20 },
  { id: "orchestrator", title: "orchestrator self-test", ceiling: 20 },
  { id: "end_to_end", title: "end-to-end orchestration", ceiling: 20 },
  { id: "cost", title: "cost policy", ceiling: 15 },
  { id: "live", title: "live operation", ceiling: 10 },
  { id: "documentation", title: "documentation", ceiling: 15 },
] as const satisfies readonly { id: string; title: string; ceiling: number }[];

export type DimensionId = (typeof DIMENSIONS)[number]["id"];

/** READY needs every dimension PASS and at least this share of the ceiling. */
export const READY_PERCENT = 90;
/** READY_WITH_CAVEATS needs no FAIL or ERROR and at least this share. */
export const CAVEATS_PERCENT = 70;

export const EXIT_CODES: Record<Verdict, 0 | 1 | 2> = { READY: 0, READY_WITH_CAVEATS: 1, NOT_READY: 2 };

const SEVERITY: Record<DimensionState, number> = { PASS: 0, NOT_VERIFIABLE: 1, FAIL: 2, ERROR: 3 };

/** The ceiling of a known dimension. */
export function ceilingOf(id: DimensionId): number {
  return DIMENSIONS.find((d) => d.id === id)?.ceiling ?? 0;
}

/**
 * The state its checks imply: any failed check is FAIL; otherwise any unverifiable check, or no
 * check at all, is NOT_VERIFIABLE (a dimension that checked nothing has not passed); else PASS.
 */
export function stateOfChecks(checks: readonly Check[]): Exclude<DimensionState, "ERROR"> {
  if (checks.some((c) => c.ok === false)) return "FAIL";
  if (checks.length === 0 || checks.some((c) => c.ok !== true)) return "NOT_VERIFIABLE";
  return "PASS";
}

/** A dimension result from its checks: PASS scores the ceiling, FAIL the share of checks that passed, else 0. */
export function dimensionFromChecks(id: DimensionId, checks: Check[]): DimensionResult {
  const ceiling = ceilingOf(id);
  const state = stateOfChecks(checks);
  const passed = checks.filter((c) => c.ok === true).length;
  const score =
    state === "PASS" ? ceiling : state === "FAIL" ? Math.floor((ceiling * passed) / checks.length) : 0;
  return { id, state, score, ceiling, checks };
}

/** A dimension that threw before it could report: ERROR, score 0. */
export function dimensionError(id: DimensionId, error: unknown, checks: Check[] = []): DimensionResult {
  const message = error instanceof Error ? error.message : String(error);
  return { id, state: "ERROR", score: 0, ceiling: ceilingOf(id), checks, error: message };
}

/** Scores one reported dimension against its fixed ceiling; the worse of the stated and the derived state wins. */
function settle(reported: DimensionResult | undefined, id: string, ceiling: number): DimensionResult {
  if (!reported)
    return {
      id,
      state: "NOT_VERIFIABLE",
      score: 0,
      ceiling,
      checks: [{ name: "executed", ok: null, detail: "the dimension did not run" }],
    };
  const derived: DimensionState = reported.state === "ERROR" ? "ERROR" : stateOfChecks(reported.checks);
  const state = SEVERITY[derived] > SEVERITY[reported.state] ? derived : reported.state;
  const raw = Number.isFinite(reported.score) ? reported.score : 0;
  const score = state === "PASS" || state === "FAIL" ? Math.min(Math.max(raw, 0), ceiling) : 0;
  return { ...reported, state, score, ceiling };
}

/**
 * The verdict: READY when every dimension passes and the total is ≥ 90% of the fixed ceiling;
 * READY_WITH_CAVEATS when nothing failed or errored and the total is ≥ 70%; NOT_READY otherwise.
 * Dimensions missing from `results` stay in the denominator (NOT_VERIFIABLE, score 0); a result
 * for a dimension that is not in the table makes the verdict NOT_READY (the harness is inconsistent).
 */
export function summarize(
  results: readonly DimensionResult[],
  table: readonly { id: string; ceiling: number }[] = DIMENSIONS,
): VerdictSummary {
  const dimensions = table.map((d) =>
    settle(
      results.find((r) => r.id === d.id),
      d.id,
      d.ceiling,
    ),
  );
  // A report the table does not expect means the harness itself is inconsistent: never READY.
  const problems: string[] = [];
  const known = new Set(table.map((d) => d.id));
  const seen = new Set<string>();
  for (const r of results) {
    if (!known.has(r.id)) problems.push(`unknown dimension ${r.id} reported (not scored)`);
    else if (seen.has(r.id)) problems.push(`dimension ${r.id} reported twice`);
    seen.add(r.id);
  }
  const total = dimensions.reduce((s, d) => s + d.score, 0);
  const ceiling = table.reduce((s, d) => s + d.ceiling, 0);
  const reached = (p: number) => ceiling > 0 && total * 100 >= p * ceiling;
  const failed = dimensions.some((d) => d.state === "FAIL" || d.state === "ERROR");
  const allPass = dimensions.every((d) => d.state === "PASS");
  const verdict: Verdict =
    problems.length === 0 && allPass && reached(READY_PERCENT)
      ? "READY"
      : problems.length === 0 && !failed && reached(CAVEATS_PERCENT)
        ? "READY_WITH_CAVEATS"
        : "NOT_READY";
  const reasons = [
    ...problems,
    ...dimensions.filter((d) => d.state !== "PASS").map((d) => `${d.id}: ${d.state}`),
  ];
  if (!reached(READY_PERCENT))
    reasons.push(
      `total ${total}/${ceiling} is below ${reached(CAVEATS_PERCENT) ? READY_PERCENT : CAVEATS_PERCENT}% of the ceiling`,
    );
  const percent = ceiling > 0 ? Math.round((total * 1000) / ceiling) / 10 : 0;
  return { verdict, total, ceiling, percent, exit_code: EXIT_CODES[verdict], dimensions, reasons };
}
