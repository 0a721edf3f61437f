import { randomInt } from "node:crypto";
import { parseDuration } from "../core/kernel/duration.js";
import { mapBounded } from "../core/kernel/map-bounded.js";
import { caseName } from "../core/task/differential-spec.js";
import type { DifferentialGateSpec } from "../core/task/task.js";
import { resolveProgram } from "../sandbox/environment.js";
import { sameOutput, showOutput } from "./differential-compare.js";
import {
  CAPTURE_BYTES,
  type CaseRun,
  caseFolders,
  generateCases,
  type ResolvedCase,
  type RunLimits,
  resolveCase,
  runCase,
} from "./differential-run.js";
import { type Gate, type GateContext, type GateResult, undecided } from "./gate.js";

/** How many differing cases the gate log shows in full. */
const SHOWN = 5;

/** How many cases run at once, each in its own pair of sandboxes. */
export const CASE_CONCURRENCY = 4;

/**
 * One case's runs: both trees' outputs, why the oracle's tree could not serve as the reference, or
 * `skipped` when an earlier case had already decided the gate.
 */
type CaseOutcome = { want: CaseRun; got: CaseRun } | { broken: string } | { skipped: true };

/** Whether a case's outcome ends the gate whatever the later cases give (read in case order below). */
const decides = (o: CaseOutcome): boolean =>
  "broken" in o || ("got" in o && (o.got.spawnError !== null || o.got.timedOut));

/**
 * A gate that runs the same cases on the oracle's tree (a copy of the pristine workspace with the task's
 * oracle applied) and on the builder's gate environment, each case in its own sandbox per tree, and passes
 * when every case's stdout (and exit code, and stderr as declared) is the same after the normaliser. The
 * expected outputs exist only in loopgate's memory: never in a tree, a file or a mount the builder's code sees.
 */
export function differentialGate(spec: DifferentialGateSpec, taskDir: string): Gate {
  const d = spec.differential;
  const timeoutMs = parseDuration(spec.timeout) ?? 30_000;
  return {
    id: spec.id,
    kind: "differential",
    feedback: spec.feedback,
    heldout: null,
    canary: null,
    writable: false,
    async run(ctx: GateContext): Promise<GateResult> {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const limits: RunLimits = {
        sandbox: ctx.sandbox,
        timeoutMs,
        signal: ctx.signal,
        process: ctx.processLimits,
      };
      if (!ctx.oracleTree)
        return undecided("spawn_failed", "no oracle tree", 0, `gate ${spec.id}: this run has no oracle tree`);
      const oracle = await ctx.oracleTree();
      if ("error" in oracle)
        return undecided(
          "spawn_failed",
          `the oracle's tree could not be built: ${oracle.error}`,
          elapsed(),
          `gate ${spec.id}: the oracle's tree could not be built: ${oracle.error}`,
        );
      const cases: ResolvedCase[] = d.cases.map((c, i) =>
        resolveCase(c, c.run ?? d.run ?? [], caseName(c, i)),
      );
      let seed: number | undefined;
      if (d.generator) {
        seed = randomInt(0, 2 ** 31 - 1);
        const g = await generateCases(d.generator, d.run, taskDir, seed, limits);
        if ("error" in g)
          return { ...undecided("spawn_failed", g.error, elapsed(), `gate ${spec.id}: ${g.error}`), seed };
        cases.push(...g.cases);
      }
      const missing = missingProgram(cases);
      if (missing)
        return undecided(
          "spawn_failed",
          `cannot start ${missing}: not installed`,
          elapsed(),
          `gate ${spec.id}: program ${missing} is not installed (searched /usr/local/bin:/usr/bin:/bin)`,
        );
      const differing: string[] = [];
      const withSeed = seed === undefined ? {} : { seed };
      const header = (n: number) =>
        `differential: ${n} of ${cases.length} cases differ (compare ${d.compare}` +
        `${d.compare_exit_code ? ", exit codes" : ""}${d.stderr !== "ignore" ? `, stderr ${d.stderr}` : ""}` +
        `${seed !== undefined ? `; generator seed ${seed}` : ""})`;
      const log = () =>
        [
          header(differing.length),
          ...differing.slice(0, SHOWN),
          ...(differing.length > SHOWN
            ? [`(${differing.length - SHOWN} more differing cases not shown)`]
            : []),
        ].join("\n");
      // Cases run CASE_CONCURRENCY at a time (each waits on its sandboxes, not the CPU); their results are
      // then read in case order, so the verdict and its log are the ones a case-by-case run gives. The
      // first case (in case order) that times out, cannot start or breaks the oracle decides the gate, so
      // once one has, no later case is started and later ones in flight are stopped: a builder whose
      // program hangs costs one round of timeouts, not one timeout per case.
      let decidedAt = Number.POSITIVE_INFINITY;
      const inFlight = new Map<number, AbortController>();
      const folders = await caseFolders();
      const runs = await mapBounded(cases, CASE_CONCURRENCY, async (c, i): Promise<CaseOutcome | null> => {
        if (ctx.signal?.aborted) return null;
        if (i > decidedAt) return { skipped: true };
        const stop = new AbortController();
        inFlight.set(i, stop);
        const caseLimits = {
          ...limits,
          signal: ctx.signal ? AbortSignal.any([ctx.signal, stop.signal]) : stop.signal,
        };
        try {
          const files = await folders.of(c, i);
          const want = await runCase(oracle.dir, files, c, caseLimits);
          const broken = oracleFailure(want, timeoutMs);
          const outcome: CaseOutcome = broken
            ? { broken }
            : { want, got: await runCase(ctx.gateEnv, files, c, caseLimits) };
          if (stop.signal.aborted && !ctx.signal?.aborted) return { skipped: true };
          if (decides(outcome) && i < decidedAt) {
            decidedAt = i;
            for (const [j, other] of inFlight) if (j > i) other.abort();
          }
          return outcome;
        } finally {
          inFlight.delete(i);
        }
      }).finally(() => folders.remove());
      const notRunNote = (after: number) => {
        const n = runs.filter((r, j) => j > after && r !== null && "skipped" in r).length;
        return n > 0 ? `; ${n} later cases were not run (the gate was decided)` : "";
      };
      for (const [i, c] of cases.entries()) {
        const run = runs[i];
        if (!run) return { ...undecided("crashed", "interrupted", elapsed()), ...withSeed };
        if ("skipped" in run)
          // Unreachable: a case is skipped only after an earlier one decided the gate, which returned above.
          throw new Error(
            `differential gate: case ${i} was skipped although no earlier case decided the gate`,
          );
        if ("broken" in run) {
          const why = `the oracle's tree failed case ${JSON.stringify(c.name)}: ${run.broken}`;
          return { ...undecided("spawn_failed", why, elapsed(), `gate ${spec.id}: ${why}`), ...withSeed };
        }
        const { want, got } = run;
        if (got.spawnError)
          return { ...undecided("spawn_failed", got.spawnError, elapsed()), log_excerpt: log(), ...withSeed };
        if (got.timedOut) {
          const summary = `case ${JSON.stringify(c.name)} timed out after ${timeoutMs} ms`;
          return {
            ...undecided("timeout", summary, elapsed()),
            log_excerpt: `${log()}\n${summary}${notRunNote(i)}`,
            ...withSeed,
          };
        }
        const diff = describeDifference(c.name, want, got, d);
        if (diff) differing.push(diff);
      }
      const passed = differing.length === 0;
      return {
        passed,
        exit_code: null,
        timed_out: false,
        error: null,
        duration_ms: elapsed(),
        log_excerpt: passed ? `differential: all ${cases.length} cases match${seedNote(seed)}` : log(),
        summary: passed
          ? `all ${cases.length} cases match`
          : `${differing.length} of ${cases.length} cases differ`,
        infrastructure: null,
        ...withSeed,
      };
    },
  };
}

const seedNote = (seed: number | undefined) => (seed === undefined ? "" : ` (generator seed ${seed})`);

/** Why the oracle's run of a case cannot serve as the expected output, or null when it can. */
function oracleFailure(r: CaseRun, timeoutMs: number): string | null {
  if (r.spawnError) return `could not start: ${r.spawnError}`;
  if (r.timedOut) return `timed out after ${timeoutMs} ms`;
  if (r.exitCode === null) return `killed by ${r.signal}`;
  if (r.overflow) return `printed more than ${CAPTURE_BYTES} bytes on one stream`;
  return null;
}

/** A bare program name every case starts that the machine does not have; null when all are there. */
function missingProgram(cases: readonly ResolvedCase[]): string | null {
  for (const c of cases) {
    const program = c.argv[0] ?? "";
    if (!program.includes("/") && !resolveProgram(program, "/")) return program;
  }
  return null;
}

/** The gate log's lines for one case whose outputs differ (expected = the oracle's tree), or null. */
function describeDifference(
  name: string,
  want: CaseRun,
  got: CaseRun,
  d: DifferentialGateSpec["differential"],
): string | null {
  const lines: string[] = [];
  if (got.overflow) lines.push(`  stdout or stderr is larger than ${CAPTURE_BYTES} bytes`);
  if (d.compare_exit_code && want.exitCode !== got.exitCode)
    lines.push(
      `  exit code: expected ${want.exitCode}, got ${got.exitCode ?? `none (killed by ${got.signal})`}`,
    );
  if (got.overflow || !sameOutput(want.stdout, got.stdout, d.compare))
    lines.push(
      `  stdout expected: ${showOutput(want.stdout)}`,
      `  stdout got:      ${showOutput(got.stdout)}`,
    );
  if (d.stderr === "presence" && want.stderr.length > 0 !== got.stderr.length > 0)
    lines.push(
      `  stderr: expected ${want.stderr.length ? "a message" : "nothing"}, got ${got.stderr.length ? showOutput(got.stderr, 120) : "nothing"}`,
    );
  if (d.stderr === "compare" && !sameOutput(want.stderr, got.stderr, d.compare))
    lines.push(
      `  stderr expected: ${showOutput(want.stderr)}`,
      `  stderr got:      ${showOutput(got.stderr)}`,
    );
  return lines.length ? [`case ${JSON.stringify(name)}:`, ...lines].join("\n") : null;
}
