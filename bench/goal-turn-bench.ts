// One todo turn of a private copy of examples/goal-csvcol (SQLite store in a temp folder, the oracle
// builder), counting what the turn costs: reads of the goal stream and of the run stream, appends,
// envelope projections and git processes. The counts are deterministic (no timing): the same turn on the
// same code always reads and spawns the same number of times.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { oracleBuilder } from "../src/builders/command-builder.js";
import { goalNewCommand } from "../src/cli/commands/goal/goal.js";
import { openStore } from "../src/cli/output/context.js";
import { openGoal } from "../src/runner/goal/goal-service.js";
import { onGitProcess } from "../src/runner/goal/repo/goal-workspace.js";
import { tick } from "../src/runner/goal/turn/tick.js";
import type { TickOutcome } from "../src/runner/goal/turn/tick-outcome.js";
import { runTask } from "../src/runner/run/run-task.js";
import type { EventStore } from "../src/store/kernel/event-store.js";
import type { BenchResult } from "./bench-result.js";

/** What one todo turn did, counted. */
export interface TurnCounts {
  goalReads: number;
  runReads: number;
  appends: number;
  gitProcesses: number;
  outcome: TickOutcome["kind"];
}

/** The figures a review measured for one todo turn on the code before the stream journal (commit 827f79e). */
export const BEFORE: Omit<TurnCounts, "outcome"> = {
  goalReads: 17,
  runReads: 4,
  gitProcesses: 28,
  appends: 21,
};

/** The store, with every readStream and append counted by the stream's kind. */
function counting(store: EventStore, counts: TurnCounts): EventStore {
  return new Proxy(store, {
    get(target, p, r) {
      const v = Reflect.get(target, p, r);
      if (typeof v !== "function") return v;
      if (p === "readStream")
        return (stream: string, ...rest: unknown[]) => {
          if (stream.startsWith("goal-")) counts.goalReads++;
          else if (stream.startsWith("run-")) counts.runReads++;
          return v.call(target, stream, ...rest);
        };
      if (p === "append")
        return (...args: unknown[]) => {
          counts.appends++;
          return v.apply(target, args);
        };
      return v.bind(target);
    },
  });
}

/**
 * Runs one todo turn of the bundled csvcol goal in a temp folder and returns its counts. The run host does
 * what the CLI's does (runner/host/goal-run-host.ts): it opens the goal (for the goal's builder; one read of the goal
 * stream and its health) and runs the todo's task on the revision's tree, here with the task's oracle.
 */
export async function measureGoalTurn(): Promise<TurnCounts> {
  const dir = mkdtempSync(join(tmpdir(), "lg-goal-bench-"));
  try {
    cpSync(resolve("examples/goal-csvcol"), join(dir, "goal-csvcol"), { recursive: true });
    cpSync(resolve("examples/sh-csvcol"), join(dir, "sh-csvcol"), { recursive: true });
    const localDir = join(dir, "store");
    const err: string[] = [];
    const io = { out: () => {}, err: (s: string) => void err.push(s), stderr: process.stderr };
    const code = await goalNewCommand(io, join(dir, "goal-csvcol", "goal.yaml"), {
      store: localDir,
      json: true,
    });
    if (code !== 0) throw new Error(`goal new failed: ${err.join("")}`);
    const counts: TurnCounts = { goalReads: 0, runReads: 0, appends: 0, gitProcesses: 0, outcome: "failed" };
    const raw = await openStore(localDir, true);
    const store = counting(raw, counts);
    onGitProcess(() => {
      counts.gitProcesses++;
    });
    try {
      const out = await tick(
        {
          store,
          localDir,
          runHost: async (run) => {
            await openGoal(store, localDir, run.goal.id);
            if (!run.loaded.oracle) throw new Error(`${run.loaded.file}: the task declares no oracle`);
            return runTask({
              runId: run.runId,
              loaded: run.loaded,
              builder: oracleBuilder(run.loaded.oracle),
              store,
              localDir,
              sandbox: "bubblewrap",
              goal: run.goal,
            });
          },
        },
        { goalId: "csvcol-rfc4180", agentId: "bench" },
      );
      counts.outcome = out.kind;
    } finally {
      onGitProcess(null);
      await raw.close();
    }
    return counts;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The `goal` section of `npm run bench`: one todo turn's reads, appends and git processes, before and now. */
export async function benchGoalTurn(): Promise<BenchResult[]> {
  const now = await measureGoalTurn();
  if (now.outcome !== "advanced") throw new Error(`the bench's todo turn did not advance (${now.outcome})`);
  const row = (metric: string, before: number, nowValue: number, target: string, met: boolean) => ({
    metric,
    unit: "count",
    loopgate: nowValue,
    baseline: before,
    ratio: before === 0 ? 0 : nowValue / before,
    target,
    met,
    note: "baseline: before (827f79e), one todo turn",
  });
  const results: BenchResult[] = [
    row("goal stream reads", BEFORE.goalReads, now.goalReads, "≤ 3", now.goalReads <= 3),
    row("run stream reads", BEFORE.runReads, now.runReads, "≤ 1", now.runReads <= 1),
    row("git processes", BEFORE.gitProcesses, now.gitProcesses, "< before", now.gitProcesses < 28),
    row("appends", BEFORE.appends, now.appends, "≤ before", now.appends <= BEFORE.appends),
  ];
  process.stdout.write(`${turnTable(results)}\n\n`);
  return results;
}

/** figure, before (827f79e), now: one line per count. */
function turnTable(results: readonly BenchResult[]): string {
  const head = ["one todo turn", "before (827f79e)", "now", "target"];
  const rows = results.map((r) => [r.metric, String(r.baseline), String(r.loopgate), r.target]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
