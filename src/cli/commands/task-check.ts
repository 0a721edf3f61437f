import { existsSync } from "node:fs";
import { noopBuilder, oracleBuilder } from "../../builders/command-builder.js";
import type { Envelope } from "../../core/envelope.js";
import { InputError } from "../../core/errors.js";
import { describeUncovered, uncoveredProtected } from "../../core/glob-coverage.js";
import { isSubprocessGate, type Task } from "../../core/task.js";
import { tamperCheckFor } from "../../gates/tamper/instrument.js";
import { loadTask } from "../../runner/load-task.js";
import { recordTaskCheck } from "../../runner/test-floors.js";
import { WorkspaceObserver } from "../../workspace/observer.js";
import { openStore } from "../context.js";
import type { CommandIO } from "../io.js";
import { executeRun, type RunFlags, runSettings } from "./run-common.js";

/** What applies to one gate: loopgate's own canary, a declared one, and the test count the oracle reached. */
export interface GateCheckReport {
  id: string;
  kind: "subprocess" | "static" | "differential";
  runner: string | null;
  canary: "auto" | "declared" | "auto+declared" | "none" | "n/a";
  count: number | null;
  warnings: string[];
}

/** The tamper-check picture of every gate, from the task and the oracle's run. */
export function gateChecks(task: Task, oracle: Envelope): GateCheckReport[] {
  return task.gates.map((g) => {
    if (!isSubprocessGate(g)) {
      const kind = "static" in g ? "static" : "differential";
      return { id: g.id, kind, runner: null, canary: "n/a", count: null, warnings: [] };
    }
    const run = oracle.gates.findLast((x) => x.id === g.id);
    const plan = tamperCheckFor(g);
    const instrumented = run?.tamper ? run.tamper.check === "auto" : plan.check === "auto";
    const declared = g.canary !== undefined;
    const canary = instrumented ? (declared ? "auto+declared" : "auto") : declared ? "declared" : "none";
    const warnings: string[] = [];
    if (g.tamper_check === "off")
      warnings.push(
        "tamper_check: off: its exit code alone decides; code under test that exits 0 on import passes it",
      );
    else if (!instrumented) {
      const why = run?.tamper?.note ?? "not a test runner loopgate recognises";
      warnings.push(
        `no automatic canary or test count (${why}); code under test that exits 0 early passes it. ` +
          `Add a held-out canary (tests that must fail) with \`canary: ./canary\` under the gate, or run a ` +
          "recognised runner (node --test, python3 -m unittest, pytest, go test, cargo test, vitest, jest)",
      );
    }
    if (instrumented && g.heldout)
      warnings.push(
        "its held-out tests run inside the same process as the code under test, which can read their literal " +
          "expectations at gate time (a stack trace, Python's inspect); a `differential` gate keeps expected " +
          "values out of the builder's gate environment",
      );
    return {
      id: g.id,
      kind: "subprocess",
      runner: run?.tamper?.runner ?? plan.runner,
      canary,
      count: instrumented ? (run?.tamper?.tests?.passed ?? null) : null,
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
  // The oracle sets the floors, so it must not be held to floors an earlier version of the tests set.
  const oracle = await executeRun(io, loaded, oracleBuilder(loaded.oracle), flags, {
    quiet: true,
    maxAttempts: 1,
    useTaskCheckFloors: false,
  });
  let recorded: { gate_id: string; tests_passed: number | null }[] = [];
  if (oracle.status === "SUCCESS") {
    const store = await openStore(runSettings(loaded, flags).store, true);
    try {
      recorded = (await recordTaskCheck(store, loaded, oracle, new Date())).gates;
    } finally {
      await store.close();
    }
  }
  const noop = await executeRun(io, loaded, noopBuilder(), flags, { quiet: true, maxAttempts: 1 });
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
    const what =
      g.kind === "subprocess"
        ? `canary: ${g.canary.padEnd(13)} count: ${g.count ?? "none"}${g.runner ? `  (${g.runner})` : ""}`
        : g.kind;
    lines.push(`    ${g.id.padEnd(width)}  ${what}`);
  }
  if (r.noop.gates_passed_without_work.length)
    lines.push(
      `  note: these gates pass even when nothing is done (fine for guards): ${r.noop.gates_passed_without_work.join(", ")}`,
    );
  const floors = Object.entries(r.test_floors_recorded);
  if (floors.length)
    lines.push(
      `  recorded: later runs of this task file must pass at least ${floors.map(([id, n]) => `${n} tests in ${id}`).join(", ")}`,
    );
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  lines.push(
    r.ok ? "ok: the gates accept the oracle and reject the no-op" : `NOT ok:\n  ${r.problems.join("\n  ")}`,
  );
  return `${lines.join("\n")}\n`;
}
