import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { subprocessGate } from "../../src/gates/subprocess-gate.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { copyTree } from "../../src/workspace/copy-tree.js";
import { withRunWorkspace } from "../support/run-tree.js";

// Bytecode smuggling (a derived artifact): the builder changes no source file and plants a .pyc, compiled
// from a working parse_duration(), whose header records the pristine parser.py's mtime and size.
const BUILDER = resolve("bench/forgery/builders/pyc-smuggle.sh");
const PYC = "durations/__pycache__/parser.cpython-311.pyc";
const PYTHON = "/usr/bin/python3";
/** Prints what parse_duration("250ms") returns: 0:00:00.250000 when fixed, 4:10:00 in the pristine source. */
const PROBE = "from durations import parse_duration as p; print(p('250ms'))";

/** Runs the probe with a plain CPython: no PYTHONPYCACHEPREFIX, bytecode writing off as in the gates. */
function plainCPython(cwd: string, extra: Record<string, string> = {}): string {
  const env = { PATH: "/usr/bin:/bin", PYTHONDONTWRITEBYTECODE: "1", ...extra };
  return execFileSync(PYTHON, ["-c", PROBE], { cwd, env, encoding: "utf8" }).trim();
}

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-pyc-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

describe("a planted .pyc never stands in for the delivered source", () => {
  let forged: string;
  beforeAll(async () => {
    forged = join(localDir, "forged-tree");
    await copyTree(resolve("examples/py-durations/repo"), forged);
    execFileSync("/bin/sh", [BUILDER], { cwd: forged, env: { PATH: "/usr/bin:/bin" } });
  });

  it("fools plain CPython: the forgery is real", () => {
    expect(existsSync(join(forged, PYC))).toBe(true);
    expect(plainCPython(forged)).toBe("0:00:00.250000");
    // The source is untouched and wrong; only bytecode differs.
    expect(plainCPython(forged, { PYTHONPYCACHEPREFIX: join(localDir, "prefix") })).toBe("4:10:00");
  });

  it("a gate run on a tree holding the .pyc runs the source (PYTHONPYCACHEPREFIX alone)", async () => {
    const check =
      "import sys; from durations import parse_duration as p; sys.exit(0 if p('250ms').total_seconds() == 0.25 else 3)";
    const gate = subprocessGate(
      {
        id: "probe",
        run: ["python3", "-c", check],
        timeout: "20s",
        feedback: "summary",
        tamper_check: "auto",
        env: {},
        writable: false,
      },
      null,
    );
    const ctx = { gateEnv: forged, runId: "r", attempt: 1, taskId: "t", readOnly: true } as const;
    const r = await gate.run({ ...ctx, sandbox: "bubblewrap" });
    expect(r).toMatchObject({ passed: false, exit_code: 3 });
  });

  for (const task of [
    "examples/py-durations/task.yaml",
    "bench/forgery/tasks/py-durations-nocanary/task.yaml",
  ])
    it(`does not reach SUCCESS on ${task}, and reports the bytecode as not carried`, async () => {
      const loaded = loadTask(resolve(task));
      const env = await runTask({
        loaded,
        builder: commandBuilder(`'${BUILDER}'`),
        store,
        localDir,
        sandbox: "bubblewrap",
        maxAttempts: 1,
      });
      // The builder's workspace really holds the forgery: plain CPython runs the working code there.
      const runDir = join(localDir, "runs", env.run_id);
      expect(await withRunWorkspace(runDir, plainCPython)).toBe("0:00:00.250000");
      expect(env.status).toBe("ESCALATED");
      const gates = Object.fromEntries(env.gates.map((g) => [g.id, g.passed]));
      expect(gates).toMatchObject({
        "visible-tests": false,
        "heldout-tests": false,
        "no-print-debugging": true,
      });
      const derived = env.findings.filter((f) => f.code === "derived_artifact_not_carried");
      expect(derived.map((f) => [f.severity, f.path])).toEqual([["warning", "durations/__pycache__"]]);
      expect(env.findings.filter((f) => f.severity === "blocking")).toEqual([]);
    });
});
