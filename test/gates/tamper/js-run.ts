import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TamperPlan } from "../../../src/gates/tamper/adapter.js";
import { reportedKey } from "../../../src/gates/tamper/identity.js";
import { ReportPipe } from "../../../src/gates/tamper/report-pipe.js";
import { recogniseRunner } from "../../../src/gates/tamper/runners.js";
import type { TestReport } from "../../../src/gates/tamper/test-report.js";
import { runSandboxed } from "../../../src/sandbox/bubblewrap.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "../../..");
/** This repository's node_modules: the JavaScript runners under test, mounted read-only in the sandbox. */
export const repoModules = join(repoRoot, "node_modules");

/** One planned and sandboxed run of a JavaScript runner, with loopgate's reading of it. */
export interface JsRun {
  plan: TamperPlan;
  exitCode: number | null;
  output: string;
  reportText: string | null;
  report: TestReport | null;
  /** Keys (`file::suite…::name`) of the tests the report says passed. */
  passed: string[];
  /** Keys of the tests the report says failed. */
  failed: string[];
}

/**
 * Writes `files` into a fresh gate environment (with node_modules as a symbolic link to this
 * repository's), plans the run as loopgate would (a private folder and a report pipe in it), and runs it
 * in bubblewrap with the gate environment and the private folder read-only, as a gate runs.
 */
export async function runJs(
  root: string,
  files: Record<string, string>,
  argv: string[],
  options: { canary: boolean; renamed?: ReadonlyMap<string, readonly string[]> },
): Promise<JsRun> {
  const gateEnv = mkdtempSync(join(root, "env-"));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(gateEnv, rel)), { recursive: true });
    writeFileSync(join(gateEnv, rel), content);
  }
  symlinkSync(repoModules, join(gateEnv, "node_modules"));
  const privateDir = mkdtempSync(join(tmpdir(), "tmp-"));
  const pipe = ReportPipe.open(join(privateDir, "report"));
  try {
    const found = recogniseRunner(argv);
    if (!found) throw new Error(`not a runner: ${argv.join(" ")}`);
    const plan = found.adapter.plan({
      argv,
      offset: found.offset,
      gateEnv,
      privateDir,
      reportPath: pipe.path,
      canary: options.canary,
      renamed: options.renamed ?? new Map(),
    });
    if (typeof plan === "string") throw new Error(plan);
    for (const f of plan.files) {
      mkdirSync(dirname(f.path), { recursive: true });
      writeFileSync(f.path, f.content, { flag: "wx" });
    }
    const r = await runSandboxed(
      {
        argv: plan.argv,
        cwd: gateEnv,
        writable: [],
        readonly: [gateEnv, privateDir, repoModules],
        env: { PATH: "/usr/bin:/bin", HOME: "/tmp", ...plan.env },
        network: false,
        timeoutMs: 120_000,
        maxOutputBytes: 1024 * 1024,
      },
      "bubblewrap",
    );
    const reportText = await pipe.finish();
    const report = found.adapter.parse(r.output, plan.reportsToPath ? reportText : null, plan);
    const keys = (o: string) => (report?.tests ?? []).filter((t) => t.outcome === o).map(reportedKey);
    return {
      plan,
      exitCode: r.exitCode,
      output: r.output,
      reportText,
      report,
      passed: keys("passed"),
      failed: keys("failed"),
    };
  } finally {
    pipe.dispose();
    rmSync(privateDir, { recursive: true, force: true });
  }
}
