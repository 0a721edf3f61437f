import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { GateTamper } from "../../core/events/loopgate-event.js";
import type { SubprocessGateSpec } from "../../core/task/task.js";
import type { GateIdentity } from "../../core/task/task-lock.js";
import type { RunnerAdapter, TamperPlan } from "./adapter.js";
import { type IdentityRule, type IdentityVerdict, judgeByIdentity } from "./identity-verdict.js";
import { plausibleName } from "./names.js";
import { plantTwins, type TwinPlanting } from "./plant.js";
import { ReportPipe } from "./report-pipe.js";
import { recogniseRunner } from "./runners.js";
import { judgeTestRun, type TestFloor, type TestVerdict } from "./test-report.js";
import { TWIN_LANGUAGES } from "./twins/languages.js";

/** One gate run's tamper check, prepared before the run and read after it. */
export interface TamperCheck {
  argv: string[];
  env: Record<string, string>;
  /** The private folder of preloads, reporters and the report pipe: mounted read-only in the sandbox. */
  privateDir: string | null;
  /** The pipe the runner's parent writes its report into, when the adapter uses one. */
  pipe: ReportPipe | null;
  adapter: RunnerAdapter | null;
  plan: TamperPlan | null;
  /** The twins written into the gate environment, when the run carries any. */
  twins: TwinPlanting | null;
  /** How the run is judged by identity, or null for the count-and-canary rule (no lock). */
  rule: IdentityRule | null;
  /** Why no check applies to this run, or how it falls back, when it does. */
  note: string | null;
  check: GateTamper["check"];
  cleanup(): void;
}

/** What `loopgate task check` and docs/explanation/tamper-checks.md say applies to a gate, without running it. */
export function tamperCheckFor(spec: Pick<SubprocessGateSpec, "run" | "tamper_check">): {
  check: GateTamper["check"];
  runner: string | null;
} {
  if (spec.tamper_check === "off") return { check: "off", runner: null };
  const r = recogniseRunner(spec.run);
  return r ? { check: "auto", runner: r.adapter.id } : { check: "none", runner: null };
}

/** Options of one gate run's tamper check. */
export interface TamperOptions {
  /** Why the check is off for this run regardless of the task (the benchmark's baselines). */
  offBecause?: string | null;
  /** The gate's held-out folder (the task's own), whose test files get twins. */
  heldout?: string | null;
  /** Judge by the lock's identities, or record them; absent: the count-and-canary rule. */
  identity?: GateIdentity | null;
}

/**
 * Plans and plants the tamper check for one run of a gate in `gateEnv` (already built, fresh): twins
 * into the held-out test files (with a lock, or recording one), else loopgate's canary in the runner's
 * idiom; preloads and reporters into a private folder the sandbox sees read-only.
 */
export async function prepareTamperCheck(
  spec: SubprocessGateSpec,
  argv: string[],
  gateEnv: string,
  options: TamperOptions = {},
): Promise<TamperCheck> {
  const none = (check: GateTamper["check"], note: string | null): TamperCheck => ({
    argv,
    env: {},
    privateDir: null,
    pipe: null,
    adapter: null,
    plan: null,
    twins: null,
    rule: null,
    note,
    check,
    cleanup() {},
  });
  if (options.offBecause) return none("off", options.offBecause);
  if (spec.tamper_check === "off") return none("off", "tamper_check: off in the task file");
  const found = recogniseRunner(argv);
  if (!found) return none("none", "not a test runner loopgate recognises");
  const identity = options.identity ?? null;
  const rule: IdentityRule | null = !identity
    ? null
    : identity.mode === "record"
      ? { mode: "record" }
      : { mode: "enforce", required: identity.gate.tests };
  let twins: TwinPlanting | null = null;
  if (identity && options.heldout) {
    const source =
      identity.mode === "record"
        ? { mode: "record" as const }
        : { mode: "enforce" as const, twins: identity.gate.twins };
    twins = await plantTwins({ heldoutDir: options.heldout, gateEnv, source, languages: TWIN_LANGUAGES });
  }
  const withTwins = (twins?.twins.length ?? 0) > 0;
  // A neutral name: the folder is visible to the code under test (the runner's argv names it).
  const privateDir = mkdtempSync(join(tmpdir(), "tmp-"));
  let pipe: ReportPipe | null = null;
  const cleanup = () => {
    pipe?.dispose();
    rmSync(privateDir, { recursive: true, force: true });
  };
  try {
    pipe = ReportPipe.open(join(privateDir, plausibleName("-")));
    const reportPath = pipe.path;
    const planWith = (canary: boolean) =>
      found.adapter.plan({
        argv,
        offset: found.offset,
        gateEnv,
        privateDir,
        reportPath,
        canary,
        renamed: twins?.renamed ?? new Map(),
      });
    let plan = planWith(!withTwins);
    let noCanary: string | null = null;
    // Judged by identity, a run whose argv leaves no room for loopgate's canary (a name filter) is still
    // held to every recorded test by name: better than its exit code alone, and the note says what is lost.
    if (typeof plan === "string" && rule && !withTwins) {
      noCanary = plan;
      plan = planWith(false);
    }
    if (typeof plan === "string") {
      cleanup();
      if (twins && options.heldout) restoreHeldout(options.heldout, gateEnv, twins);
      return { ...none("none", `${found.adapter.id}: ${plan}`), adapter: found.adapter };
    }
    for (const f of plan.files) {
      mkdirSync(dirname(f.path), { recursive: true });
      writeFileSync(f.path, f.content, { flag: "wx", mode: 0o644 });
    }
    if (!plan.reportsToPath) {
      pipe.dispose();
      pipe = null;
    }
    return {
      argv: plan.argv,
      env: plan.env,
      privateDir,
      pipe,
      adapter: found.adapter,
      plan,
      twins,
      rule,
      note:
        [
          withTwins ? `mutated twins: ${twins?.twins.length}` : null,
          twins?.untwinned.length ? `no twins for ${twins.untwinned.length} test(s) or file(s)` : null,
          noCanary ? `no canary (${noCanary}): held to the recorded tests by name only` : null,
        ]
          .filter((x) => x !== null)
          .join("; ") || null,
      check: "auto",
      cleanup,
    };
  } catch (e) {
    cleanup();
    throw e;
  }
}

/** Puts the task's own held-out files back where twins were written (the run cannot be instrumented). */
function restoreHeldout(heldout: string, gateEnv: string, twins: TwinPlanting): void {
  const files = new Set([...twins.renamed.keys()].map((k) => k.split("::")[0] ?? ""));
  for (const f of files) {
    if (!f) continue;
    rmSync(join(gateEnv, f), { force: true });
    copyFileSync(join(heldout, f), join(gateEnv, f));
  }
}

/** loopgate's verdict on a run that exited normally, from its own reading of the runner's report. */
export function verdictOf(
  t: TamperCheck,
  output: string,
  exitCode: number,
  floor: TestFloor,
  reportText: string | null,
): (TestVerdict & Partial<Pick<IdentityVerdict, "identity" | "twins" | "observed">>) | null {
  if (!t.plan || !t.adapter) return null;
  const report = t.adapter.parse(output, reportText, t.plan);
  if (t.rule)
    return judgeByIdentity({
      report,
      canary: t.plan.canary,
      twins: t.twins,
      rule: t.rule,
      exitCode,
    });
  return judgeTestRun({ report, canary: t.plan.canary, floor, exitCode });
}

/** The declared canary's files (relative to the gate environment) reported as failing in this run. */
export function declaredCanaryFailed(
  t: TamperCheck,
  output: string,
  reportText: string | null,
  files: readonly string[],
  gateEnv: string,
): boolean | null {
  if (!t.plan || !t.adapter) return null;
  const report = t.adapter.parse(output, reportText, t.plan);
  if (!report) return null;
  const own = new Set(t.plan.canary?.tests ?? []);
  const wanted = new Set(files.map((f) => f.replace(/^\.\//, "")));
  const failed = report.tests.filter((x) => x.outcome === "failed" && !own.has(x.name));
  if (failed.some((x) => x.file === null)) return failed.length > 0;
  return failed.some((x) => x.file !== null && (wanted.has(x.file) || wanted.has(relative(gateEnv, x.file))));
}
