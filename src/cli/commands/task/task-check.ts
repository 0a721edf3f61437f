import { existsSync } from "node:fs";
import { noopBuilder, oracleBuilder } from "../../../builders/command-builder.js";
import { InputError } from "../../../core/kernel/errors.js";
import { describeUncovered, uncoveredProtected } from "../../../core/observation/glob-coverage.js";
import type { Envelope } from "../../../core/run/envelope.js";
import { isSubprocessGate, type Task } from "../../../core/task/task.js";
import { tamperCheckFor } from "../../../gates/tamper/instrument.js";
import type { RunFlags } from "../../../runner/host/run-flags.js";
import { loadTask } from "../../../runner/task-source/load-task.js";
import { writeTaskLock } from "../../../runner/task-source/task-lock-file.js";
import { recordTaskCheck } from "../../../runner/task-source/test-floors.js";
import { WorkspaceObserver } from "../../../workspace/observer.js";
import { openStore } from "../../output/context.js";
import type { CommandIO } from "../../output/io.js";
import { executeRun } from "../execute-run.js";
import { runSettings } from "../run-settings.js";

/** What applies to one gate: identities and twins, loopgate's canary, a declared one; what the oracle recorded. */
export interface GateCheckReport {
  id: string;
  kind: "subprocess" | "static" | "differential";
  runner: string | null;
  /** How the gate's tests are vouched for. */
  check: "identity+twins" | "identity+canary" | "canary" | "declared-canary" | "exit-code" | "n/a";
  /** Tests recorded by identity (the lock), or null when none could be. */
  tests: number | null;
  /** Held-out tests that got twins, and why others did not. */
  twins: { tests: number; untwinned: string[] } | null;
  warnings: string[];
}

/** The tamper-check picture of every gate, from the task and the oracle's recording run. */
export function gateChecks(task: Task, oracle: Envelope): GateCheckReport[] {
  return task.gates.map((g) => {
    if (!isSubprocessGate(g)) {
      const kind = "static" in g ? "static" : "differential";
      return { id: g.id, kind, runner: null, check: "n/a", tests: null, twins: null, warnings: [] };
    }
    const run = oracle.gates.findLast((x) => x.id === g.id);
    const plan = tamperCheckFor(g);
    const instrumented = run?.tamper ? run.tamper.check === "auto" : plan.check === "auto";
    const observed = run?.tamper?.observed;
    const twinned = new Set((observed?.twins_failed ?? []).map((t) => t.test)).size;
    const untwinned = observed?.untwinned ?? [];
    const declared = g.canary !== undefined;
    const check: GateCheckReport["check"] = !instrumented
      ? declared
        ? "declared-canary"
        : "exit-code"
      : observed
        ? twinned > 0
          ? "identity+twins"
          : "identity+canary"
        : "canary";
    const warnings: string[] = [];
    if (g.tamper_check === "off")
      warnings.push(
        "tamper_check: off: its exit code alone decides; code under test that exits 0 on import passes it",
      );
    else if (!instrumented && !declared) {
      const why = run?.tamper?.note ?? "not a test runner loopgate recognises";
      warnings.push(
        `no per-test results (${why}); code under test that exits 0 early passes it. Run a recognised ` +
          "runner (node --test, python3 -m unittest, pytest, go test, cargo test, vitest, jest, mocha, tape), " +
          "or add a held-out canary (tests that must fail) with `canary: ./canary` under the gate",
      );
    }
    if (instrumented && g.heldout && observed && twinned === 0)
      warnings.push(
        "its held-out tests got no mutated twins" +
          (untwinned[0]
            ? ` (${untwinned[0]}${untwinned.length > 1 ? `, and ${untwinned.length - 1} more` : ""})`
            : "") +
          ": code under test could read their expected values at gate time and pass; a `differential` gate " +
          "keeps expected values out of the gate environment",
      );
    return {
      id: g.id,
      kind: "subprocess",
      runner: run?.tamper?.runner ?? plan.runner,
      check,
      tests: observed ? observed.passed.length : null,
      twins: g.heldout && observed ? { tests: twinned, untwinned } : null,
      warnings,
    };
  });
}

/**
 * `loopgate task check TASK`: the oracle must reach SUCCESS and the no-op must not; the count of real
 * tests the oracle passed per gate is recorded as the floor later runs of this task file must reach.
 * `--strict` turns every warning (a gate loopgate cannot tamper-check) into a problem.
 */
export async function taskCheckCommand(io: CommandIO, taskPath: string, flags: RunFlags): Promise<number> {
  const loaded = loadTask(taskPath);
  if (!loaded.oracle)
    throw new InputError(
      "task check needs an oracle (a reference solution) to compare against",
      `${taskPath}: oracle`,
    );
  // The oracle records the lock, so it must not be held to a lock or floors an earlier version set: it
  // runs every candidate twin, and the lock keeps the tests it passed and the twins it failed.
  const oracle = await executeRun(io, loaded, oracleBuilder(loaded.oracle), flags, {
    quiet: true,
    maxAttempts: 1,
    useTaskCheckFloors: false,
    identityMode: "record",
  });
  let recorded: { gate_id: string; tests_passed: number | null }[] = [];
  let lockPath: string | null = null;
  if (oracle.status === "SUCCESS") {
    lockPath = writeTaskLock(loaded, oracle, new Date()).path;
    const store = await openStore(runSettings(loaded, flags).store, true);
    try {
      recorded = (await recordTaskCheck(store, loaded, oracle, new Date())).gates;
    } finally {
      await store.close();
    }
  }
  const noop = await executeRun(io, loaded, noopBuilder(), flags, {
    quiet: true,
    maxAttempts: 1,
    strictLock: false,
  });
  const problems: string[] = [];
  // A protected glob that matches nothing in the workspace protects nothing (a typo such as test/** for tests/).
  if (existsSync(loaded.workspace)) {
    const observed = await new WorkspaceObserver(loaded.workspace).observe();
    const paths = observed.entries.map((e) => e.path);
    for (const u of uncoveredProtected(loaded.task.protected, paths))
      problems.push(describeUncovered(u, loaded.task.workspace));
  }
  // A TOOL_FAILURE says nothing about the gates: the oracle (or a gate) could not run at all.
  if (oracle.status === "TOOL_FAILURE")
    problems.push(`the oracle run could not be judged (TOOL_FAILURE: ${oracle.reason})`);
  else if (oracle.status !== "SUCCESS")
    problems.push(
      `the oracle did not reach SUCCESS (${oracle.status}: ${oracle.reason}); the gates reject a correct solution`,
    );
  if (noop.status === "SUCCESS")
    problems.push(
      "the no-op builder reached SUCCESS: the gates do not discriminate between doing nothing and the fix",
    );
  const gates = gateChecks(loaded.task, oracle);
  const warnings = gates.flatMap((g) => g.warnings.map((w) => `gate ${g.id}: ${w}`));
  if (flags.strict) problems.push(...warnings.map((w) => `${w} (--strict)`));
  const stillPassing = noop.gates.filter((g) => g.passed).map((g) => g.id);
  const floors = recorded.filter((r) => r.tests_passed !== null && r.tests_passed > 0);
  const result = {
    task_id: loaded.task.id,
    ok: problems.length === 0,
    oracle: { run_id: oracle.run_id, status: oracle.status, reason: oracle.reason },
    noop: {
      run_id: noop.run_id,
      status: noop.status,
      reason: noop.reason,
      gates_passed_without_work: stillPassing,
    },
    gates,
    test_floors_recorded: Object.fromEntries(floors.map((r) => [r.gate_id, r.tests_passed])),
    lock: lockPath,
    warnings,
    problems,
  };
  if (flags.json) io.out(`${JSON.stringify(result, null, 2)}\n`);
  else io.out(formatTaskCheck(result));
  if (oracle.status === "TOOL_FAILURE" || noop.status === "TOOL_FAILURE") return 2;
  return result.ok ? 0 : 1;
}

function formatTaskCheck(r: {
  task_id: string;
  ok: boolean;
  oracle: { status: string; reason: string };
  noop: { status: string; reason: string; gates_passed_without_work: string[] };
  gates: GateCheckReport[];
  test_floors_recorded: Record<string, number | null>;
  lock: string | null;
  warnings: string[];
  problems: string[];
}): string {
  const lines = [
    `task ${r.task_id}`,
    `  oracle: ${r.oracle.status} (${r.oracle.reason})`,
    `  no-op:  ${r.noop.status} (${r.noop.reason})`,
    "  gates:",
  ];
  const width = Math.max(...r.gates.map((g) => g.id.length));
  for (const g of r.gates) {
    lines.push(`    ${g.id.padEnd(width)}  ${describeGate(g)}`);
  }
  if (r.noop.gates_passed_without_work.length)
    lines.push(
      `  note: these gates pass even when nothing is done (fine for guards): ${r.noop.gates_passed_without_work.join(", ")}`,
    );
  if (r.lock)
    lines.push(
      `  recorded: ${r.lock} (commit it with the task): later runs must pass each recorded test by name, and fail every twin`,
    );
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  lines.push(
    r.ok ? "ok: the gates accept the oracle and reject the no-op" : `NOT ok:\n  ${r.problems.join("\n  ")}`,
  );
  return `${lines.join("\n")}\n`;
}

function describeGate(g: GateCheckReport): string {
  if (g.kind !== "subprocess") return g.kind;
  const runner = g.runner ? `${g.runner}: ` : "";
  const tests = g.tests !== null ? `${g.tests} tests by identity` : "";
  const twins = g.twins
    ? `, twins for ${g.twins.tests} held-out test(s)${g.twins.untwinned.length ? ` (${g.twins.untwinned.length} without: ${g.twins.untwinned[0]})` : ""}`
    : "";
  return `${runner}${g.check}${tests ? `, ${tests}` : ""}${twins}`;
}
