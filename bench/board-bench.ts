// `node --import tsx bench/board-bench.ts`: how long the board takes to answer its two largest pages, over
// HTTP from a running board (`loopgate serve`'s library), against the CLI's own reading of the same data:
// a runs page of 1,000 runs (beside `loopgate runs --limit 1000`'s reads and folds), and the board of a
// goal with 200 todos (beside `loopgate goal status`'s openGoal). Each figure is the median of 5 requests
// after one warm-up. Build nothing first: it runs the sources.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { goalNewCommand } from "../src/cli/commands/goal/goal.js";
import { cliReaders } from "../src/cli/commands/serve.js";
import { openStore } from "../src/cli/output/context.js";
import type { CommandIO } from "../src/cli/output/io.js";
import { locateStore } from "../src/cli/output/store-location.js";
import type { LoopgateEvent } from "../src/core/events/loopgate-event.js";
import { projectEnvelope } from "../src/core/run/envelope.js";
import { foldRun } from "../src/core/run/run-decider.js";
import { openGoal } from "../src/runner/goal/goal-service.js";
import { startBoard } from "../src/serve/board-server.js";
import type { BenchResult } from "./bench-result.js";
import { formatBenchTable } from "./bench-result.js";

const RUNS = 1000;
const TODOS = 200;
const quiet: CommandIO = { out: () => {}, err: () => {}, stderr: process.stderr };

async function median(n: number, f: () => Promise<unknown>): Promise<number> {
  await f();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(n / 2)] as number;
}

/** A store of RUNS runs: one real oracle run of examples/sh-csvcol, its events copied under fresh ids. */
async function runsStore(dir: string): Promise<void> {
  // In a process of its own, as a user runs it (from the sources: no build needed).
  const args = JSON.stringify(["run", resolve("examples/sh-csvcol/task.yaml"), "--oracle", "--store", dir]);
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "-e",
      `import("./src/cli/main.ts").then(async (m) => { process.exitCode = await m.main(${args}); })`,
    ],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`the seed run failed (exit ${r.status}):\n${r.stderr}`);
  const store = await openStore(dir, false);
  try {
    const [first] = await store.listStreams({ prefix: "run-" });
    const events = await store.readStream(first?.stream as string);
    for (let i = 1; i < RUNS; i++) {
      const copy = events.map(({ stream: _s, revision: _r, position: _p, ...e }, k) => ({
        ...e,
        id: `bench-${i}-${k}`,
      })) as LoopgateEvent[];
      await store.append(`run-bench-${String(i).padStart(4, "0")}`, copy, "no_stream");
    }
  } finally {
    await store.close();
  }
}

/** A copy of examples/goal-csvcol whose goal file has TODOS todos (fixes, gates and actions, chained). */
function bigGoal(root: string): string {
  const examples = join(root, "examples");
  cpSync(resolve("examples/goal-csvcol"), join(examples, "goal-csvcol"), { recursive: true });
  cpSync(resolve("examples/sh-csvcol"), join(examples, "sh-csvcol"), { recursive: true });
  const tasks = ["tasks/quoted-fields/task.yaml", "tasks/crlf/task.yaml", "tasks/unknown-column/task.yaml"];
  const todos: string[] = [];
  for (let i = 0; i < TODOS; i++) {
    const id = `todo_item_${String(i).padStart(3, "0")}`;
    const after = i > 0 && i % 5 !== 0 ? `, depends_on: [todo_item_${String(i - 1).padStart(3, "0")}]` : "";
    if (i % 10 === 3)
      todos.push(`  - { id: ${id}, class: user_gate, content: "decision ${i}", decision_scope: scope${i} }`);
    else if (i % 10 === 7)
      todos.push(
        `  - { id: ${id}, class: user_action, content: "action ${i}", required_decision_scopes: [scope${i - 4}]${after} }`,
      );
    else
      todos.push(
        `  - { id: ${id}, class: advancement_task, content: "fix ${i}", task: ${tasks[i % 3]}${after} }`,
      );
  }
  const file = join(examples, "goal-csvcol", "big-goal.yaml");
  writeFileSync(
    file,
    [
      "id: big-goal",
      "objective: A goal with many todos, for the board's benchmark.",
      "workspace: ../sh-csvcol/repo",
      "builder: oracle",
      "budget: { window: 24h, turns: 1000 }",
      "acceptance:",
      "  - { task: tasks/crlf/task.yaml, gates: [heldout-crlf] }",
      "todos:",
      ...todos,
      "",
    ].join("\n"),
  );
  return file;
}

/** The board's two largest pages against the CLI's reading of the same data. */
export async function benchBoard(): Promise<BenchResult[]> {
  const root = mkdtempSync(join(tmpdir(), "loopgate-board-bench-"));
  try {
    const dir = join(root, "store");
    await runsStore(dir);
    await goalNewCommand(quiet, bigGoal(root), { store: dir });
    const where = locateStore(dir);
    const store = await openStore(dir, "read");
    const board = await startBoard({
      store,
      localDir: dir,
      storeLabel: dir,
      readers: cliReaders(where, dir),
      host: "127.0.0.1",
      port: 0,
      credential: null,
    });
    try {
      const get = async (path: string) => {
        // A kept-alive connection the server closed while the baseline ran is opened again, once.
        const r = await fetch(`${board.url}${path}`).catch(() => fetch(`${board.url}${path}`));
        if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
        return r.text();
      };
      const runsPage = await median(5, () => get(`?limit=${RUNS}`));
      const runsCli = await median(5, async () => {
        for (const s of (await store.listStreams({ prefix: "run-" })).slice(0, RUNS)) {
          const events = await store.readStream(s.stream);
          foldRun(events);
          projectEnvelope(s.stream.slice(4), events);
        }
      });
      const goalPage = await median(5, () => get("goals/big-goal"));
      const goalCli = await median(5, () => openGoal(store, dir, "big-goal"));
      const listed = (await get(`?limit=${RUNS}`)).match(/href="\/runs\//g)?.length ?? 0;
      if (listed !== RUNS) throw new Error(`the runs page listed ${listed} runs, not ${RUNS}`);
      return [
        {
          metric: `runs page, ${RUNS} runs (HTTP)`,
          unit: "ms",
          loopgate: runsPage,
          baseline: runsCli,
          ratio: runsPage / runsCli,
          target: "< 1000 ms",
          met: runsPage < 1000,
          note: "baseline: loopgate runs' reads and folds",
        },
        {
          metric: `goal board, ${TODOS} todos (HTTP)`,
          unit: "ms",
          loopgate: goalPage,
          baseline: goalCli,
          ratio: goalPage / goalCli,
          target: "< 1000 ms",
          met: goalPage < 1000,
          note: "baseline: goal status's openGoal",
        },
      ];
    } finally {
      await board.close();
      await store.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve("bench/board-bench.ts")) {
  const results = await benchBoard();
  process.stdout.write(`${formatBenchTable(results)}\n`);
  process.exitCode = results.every((r) => r.met) ? 0 : 1;
}
