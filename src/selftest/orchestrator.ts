// Dimension 2, orchestrator self-test: the sandbox isolates, the event store keeps its contract,
// and a gate environment restores what the builder must not touch.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { ConcurrencyError } from "../core/kernel/errors.js";
import { planGateChanges } from "../core/observation/gate-change-plan.js";
import type { SubprocessGateSpec } from "../core/task/task.js";
import { subprocessGate } from "../gates/subprocess-gate.js";
import { sandboxSelfTest } from "../sandbox/bubblewrap.js";
import { SqliteEventStore } from "../store/sqlite/sqlite-event-store.js";
import { copyTree } from "../workspace/copy-tree.js";
import { buildGateEnvironment } from "../workspace/gate-environment.js";
import { WorkspaceObserver } from "../workspace/observer.js";
import { check, must, withTemp } from "./check.js";
import { successfulRun } from "./contracts.js";
import { type DimensionResult, dimensionFromChecks } from "./verdict.js";

function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

async function storeRoundTrip(dir: string): Promise<string> {
  const file = join(dir, "events.db");
  const [e0, e1, e2] = successfulRun();
  must(e0 && e1 && e2, "no sample events");
  const store = SqliteEventStore.open(file);
  try {
    const first = await store.append("run-1", [e0, e1], "no_stream");
    must(first.lastRevision === 1 && first.appended === 2, `append: ${JSON.stringify(first)}`);
    const conflict = await store.append("run-1", [e2], 0).then(
      () => null,
      (e: unknown) => e,
    );
    must(
      conflict instanceof ConcurrencyError,
      `a stale expected revision was not refused: ${String(conflict)}`,
    );
    const retry = await store.append("run-1", [e0, e1], "no_stream");
    must(retry.appended === 0, "a retried append wrote again");
    const bad = await store.append("run-1", [{ ...e2, type: "nonsense" } as never], 1).then(
      () => null,
      (e: unknown) => e,
    );
    must(bad instanceof Error, "an invalid event was stored");
    const s = store.settings();
    must(s.journalMode === "wal" && s.synchronous === 2, `pragmas: ${JSON.stringify(s)}`);
  } finally {
    await store.close();
  }
  const reopened = SqliteEventStore.open(file);
  try {
    const back = await reopened.readStream("run-1");
    must(back.length === 2, `read back ${back.length} events, expected 2`);
    back.forEach((e, i) => {
      const { stream: _s, revision, position: _p, ...event } = e;
      must(revision === i && isDeepStrictEqual(event, [e0, e1][i]), `event ${i} changed in the store`);
    });
  } finally {
    await reopened.close();
  }
  return "append, read back after reopening, stale revision refused (ConcurrencyError), idempotent retry, invalid event refused, WAL + synchronous=FULL";
}

async function gateEnvironment(dir: string): Promise<string> {
  const pristineDir = join(dir, "pristine");
  const workspaceDir = join(dir, "work");
  const heldoutDir = join(dir, "heldout");
  writeTree(pristineDir, { "src/a.js": "broken", "test/a.test.js": "real test", "package.json": "{}" });
  writeTree(heldoutDir, { "heldout-test/h.test.js": "held out" });
  await copyTree(pristineDir, workspaceDir);
  // The builder fixes src, forges the protected test (its content is the text "test.skip()", not a
  // skipped test of this suite) and hides both behind a .gitignore.
  writeTree(workspaceDir, {
    "src/a.js": "fixed",
    "test/a.test.js": "test.skip()",
    ".gitignore": "src/\ntest/\n",
    "heldout-test/h.test.js": "forged",
  });
  const pristine = await new WorkspaceObserver(pristineDir).observe();
  const workspace = await new WorkspaceObserver(workspaceDir).observe();
  const plan = planGateChanges(pristine, workspace, { deliverables: ["src/**"], protected: ["test/**"] });
  const finding = plan.findings.find(
    (f) => f.code === "protected_path_modified" && f.path === "test/a.test.js",
  );
  must(
    finding?.severity === "blocking",
    `no blocking protected_path_modified: ${JSON.stringify(plan.findings)}`,
  );
  const env = await buildGateEnvironment({
    pristineDir,
    pristine,
    workspaceDir,
    workspace,
    plan,
    heldoutDir,
    destDir: join(dir, "env"),
    mode: "link",
  });
  const read = (rel: string) => readFileSync(join(env.dir, rel), "utf8");
  must(read("test/a.test.js") === "real test", "the protected test was not restored from pristine");
  must(read("src/a.js") === "fixed", "the deliverable did not reach the gate environment");
  must(read("heldout-test/h.test.js") === "held out", "the held-out overlay did not win");
  return "protected file restored, deliverable carried despite .gitignore, held-out overlay wins, blocking finding recorded";
}

/** A gate that times out, crashes or cannot start is not passed, and says why. */
async function inconclusiveGates(dir: string): Promise<string> {
  const gate = (id: string, run: string[], timeout: string) =>
    subprocessGate(
      { id, run, timeout, feedback: "summary", env: {}, writable: false } as SubprocessGateSpec,
      null,
    );
  const ctx = {
    gateEnv: dir,
    runId: "selftest",
    attempt: 1,
    taskId: "selftest",
    sandbox: "bubblewrap" as const,
    readOnly: true,
  };
  const cases = [
    { gate: gate("slow", ["sleep", "10"], "300ms"), error: "timeout" },
    { gate: gate("crash", ["sh", "-c", "kill -KILL $$$$"], "10s"), error: "crashed" },
    { gate: gate("absent", ["./no-such-verifier"], "10s"), error: "spawn_failed" },
  ];
  const seen: string[] = [];
  for (const c of cases) {
    const r = await c.gate.run(ctx);
    must(
      !r.passed && r.error === c.error,
      `gate ${c.gate.id}: passed=${r.passed}, error=${r.error}, expected ${c.error}`,
    );
    seen.push(`${c.gate.id}: ${r.error}`);
  }
  return `not passed: ${seen.join(", ")}`;
}

/** The orchestrator self-test dimension. */
export async function orchestratorDimension(): Promise<DimensionResult> {
  const checks = [
    await check("sandbox self-test (bubblewrap isolates)", async () => {
      await sandboxSelfTest();
      return "workspace writable, system read-only, secret folder unmounted, no leaked environment";
    }),
    await check("SQLite event store round trip", () => withTemp("store", storeRoundTrip)),
    await check("gate environment build restores protected files", () =>
      withTemp("gate-env", gateEnvironment),
    ),
    await check("an inconclusive gate (timeout, crash, missing program) is not passed", () =>
      withTemp("gates", inconclusiveGates),
    ),
  ];
  return dimensionFromChecks("orchestrator", checks);
}
