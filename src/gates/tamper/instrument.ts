import {
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { GateTamper } from "../../core/events.js";
import type { SubprocessGateSpec } from "../../core/task.js";
import type { RunnerAdapter, TamperPlan } from "./adapter.js";
import { recogniseRunner } from "./runners.js";
import { judgeTestRun, type TestFloor, type TestVerdict } from "./test-report.js";

/** Report files larger than this are not a runner's honest output. */
const REPORT_LIMIT = 32 * 1024 * 1024;

/** One gate run's tamper check, prepared before the run and read after it. */
export interface TamperCheck {
  argv: string[];
  env: Record<string, string>;
  /** The private folder the runner's parent writes its report into; mounted writable in the sandbox. */
  reportDir: string | null;
  adapter: RunnerAdapter | null;
  plan: TamperPlan | null;
  /** Why no check applies to this run, when none does. */
  note: string | null;
  check: GateTamper["check"];
  cleanup(): void;
}

/** What `loopgate task check` and the README say applies to a gate, without running it. */
export function tamperCheckFor(spec: Pick<SubprocessGateSpec, "run" | "tamper_check">): {
  check: GateTamper["check"];
  runner: string | null;
} {
  if (spec.tamper_check === "off") return { check: "off", runner: null };
  const r = recogniseRunner(spec.run);
  return r ? { check: "auto", runner: r.adapter.id } : { check: "none", runner: null };
}

/**
 * Plans and plants the tamper check for one run of a gate in `gateEnv` (already built, fresh):
 * the canary files go into the gate environment, the runner's reporter and its report into a folder
 * of this run's own outside it.
 */
export function prepareTamperCheck(
  spec: SubprocessGateSpec,
  argv: string[],
  gateEnv: string,
  /** Why the check is off for this run regardless of the task (the benchmark's baselines). */
  offBecause: string | null = null,
): TamperCheck {
  const none = (check: GateTamper["check"], note: string | null): TamperCheck => ({
    argv,
    env: {},
    reportDir: null,
    adapter: null,
    plan: null,
    note,
    check,
    cleanup() {},
  });
  if (offBecause) return none("off", offBecause);
  if (spec.tamper_check === "off") return none("off", "tamper_check: off in the task file");
  const found = recogniseRunner(argv);
  if (!found) return none("none", "not a test runner loopgate recognises");
  // A neutral name: the folder is visible to the code under test (the runner's argv names it).
  const reportDir = mkdtempSync(join(tmpdir(), "tmp-"));
  const cleanup = () => rmSync(reportDir, { recursive: true, force: true });
  const plan = found.adapter.plan({ argv, offset: found.offset, gateEnv, reportDir });
  if (typeof plan === "string") {
    cleanup();
    return { ...none("none", `${found.adapter.id}: ${plan}`), adapter: found.adapter };
  }
  for (const f of plan.files) {
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, f.content, { flag: "wx", mode: 0o644 });
  }
  return {
    argv: plan.argv,
    env: plan.env,
    reportDir,
    adapter: found.adapter,
    plan,
    note: null,
    check: "auto",
    cleanup,
  };
}

/** Reads the report file the runner's parent wrote, or null when there is none or it is not plausible. */
export function readReport(plan: TamperPlan): string | null {
  if (!plan.reportFile) return null;
  let fd: number;
  try {
    fd = openSync(plan.reportFile, "r");
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    if (size > REPORT_LIMIT) return null;
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** loopgate's verdict on a run that exited normally, from its own reading of the runner's report. */
export function verdictOf(
  t: TamperCheck,
  output: string,
  exitCode: number,
  floor: TestFloor,
): TestVerdict | null {
  if (!t.plan || !t.adapter) return null;
  const report = t.adapter.parse(output, readReport(t.plan), t.plan);
  return judgeTestRun({ report, canary: t.plan.canary, floor, exitCode });
}

/** The declared canary's files (relative to the gate environment) reported as failing in this run. */
export function declaredCanaryFailed(
  t: TamperCheck,
  output: string,
  files: readonly string[],
  gateEnv: string,
): boolean | null {
  if (!t.plan || !t.adapter) return null;
  const report = t.adapter.parse(output, readReport(t.plan), t.plan);
  if (!report) return null;
  const own = new Set(t.plan.canary.tests);
  const wanted = new Set(files.map((f) => f.replace(/^\.\//, "")));
  const failed = report.tests.filter((x) => x.outcome === "failed" && !own.has(x.name));
  if (failed.some((x) => x.file === null)) return failed.length > 0;
  return failed.some((x) => x.file !== null && (wanted.has(x.file) || wanted.has(relative(gateEnv, x.file))));
}
