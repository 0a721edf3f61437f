// A Postgres goal's task files live in the store: `goal new` snapshots every task the goal
// names (todos' and acceptance items') into the database before the goal stream records it, so a worker
// on another machine, without the folder the goal was created from, runs the goal's turns and its
// acceptance from the snapshot written out under its own --work-dir. Checked by the goal's own facts
// (each todo completed once, every acceptance receipt SUCCESS), by where the task files are (the
// original folder is gone), and by a forged builder that tries to read the held-out files.
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { goalTaskFile, goalTaskKey } from "../../src/runner/goal/goal-tasks.js";
import { prunePostgres } from "../../src/store/postgres/pg-prune.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { runTree } from "../support/run-tree.js";
import { exampleDir, loopgate, ROOT, removeTemps, show, tempDir } from "./cli.js";

let db: FreshDatabase;
let store: PostgresEventStore;
beforeAll(async () => {
  db = await freshDatabase();
  store = await PostgresEventStore.open(db.url, { create: true });
}, 60_000);
afterAll(async () => {
  removeTemps();
  await store?.close();
  await db?.drop();
});

const TODOS = ["todo_quoted_fields", "todo_crlf", "todo_unknown_column"];
const TASKS = {
  todo_quoted_fields: "quoted-fields",
  todo_crlf: "crlf",
  todo_unknown_column: "unknown-column",
};

/** A goal of three advancement todos over sh-csvcol in a folder of its own (the machine that creates it). */
function goalFixture(id: string): { dir: string; file: string } {
  const dir = tempDir("loopgate-pg-tasks-");
  cpSync(join(ROOT, "examples", "goal-csvcol", "tasks"), join(dir, "goal", "tasks"), { recursive: true });
  cpSync(exampleDir("sh-csvcol"), join(dir, "sh-csvcol"), { recursive: true });
  const file = join(dir, "goal", "goal.yaml");
  writeFileSync(
    file,
    `id: ${id}
objective: csvcol reads quoted fields and CRLF, and rejects an unknown column.
workspace: ../sh-csvcol/repo
builder: oracle
budget: { window: 24h, turns: 20, cost_usd: 5 }
acceptance:
  - { task: tasks/quoted-fields/task.yaml, gates: [heldout-quoted] }
  - { task: tasks/crlf/task.yaml }
todos:
${TODOS.map((t) => `  - { id: ${t}, class: advancement_task, content: ${t}., task: tasks/${TASKS[t as keyof typeof TASKS]}/task.yaml }`).join("\n")}
`,
  );
  return { dir, file };
}

let n = 0;
/** `goal new` from the goal's own folder; returns its id. */
async function newGoal(dir: string, file: string): Promise<void> {
  const made = await loopgate(["goal", "new", file, "--store", db.url, "--json"], { cwd: dir });
  expect(made.code, show(made)).toBe(0);
}

function worker(host: string, extra: string[]): ReturnType<typeof loopgate> {
  return loopgate(
    ["worker", "--store", db.url, "--lease", "5s", "--id", `t${++n}`, "--work-dir", host, ...extra],
    {
      cwd: host,
      timeoutMs: 400_000,
    },
  );
}

async function goalEvents(id: string) {
  return store.readStream(goalStream(id));
}

describe("a Postgres goal's task files are in the store", () => {
  it("goal new and submit in folder X, X renamed away: a worker in another folder finishes the goal from the snapshots", async () => {
    const id = "pg-tasks-moved";
    const { dir, file } = goalFixture(id);
    await newGoal(dir, file);
    const sub = await loopgate(["goal", "submit", id, "--store", db.url, "--json"], { cwd: dir });
    expect(sub.code, show(sub)).toBe(0);
    // Every task path the goal recorded is gone from this machine.
    const recorded = (await goalEvents(id))
      .filter((e) => e.type === "todo_added")
      .map((e) => (e.data as { todo: { task: { path: string } } }).todo.task.path);
    expect(recorded.length).toBe(TODOS.length);
    renameSync(dir, `${dir}-moved-away`);
    for (const p of recorded) expect(existsSync(p), p).toBe(false);
    // The goal's health holds from anywhere: the store has its tasks.
    const elsewhere = tempDir("loopgate-elsewhere-");
    const st = await loopgate(["goal", "status", id, "--store", db.url, "--json"], { cwd: elsewhere });
    expect(st.code, show(st)).toBe(0);
    expect(st.stdout).not.toMatch(/blocked_health/);

    const host = tempDir("loopgate-host-");
    const w = await worker(host, ["--until-idle"]);
    expect(w.code, show(w)).toBe(0);
    const events = await goalEvents(id);
    const completed: Record<string, number> = {};
    for (const e of events)
      if (e.type === "todo_completed") {
        const t = (e.data as { todo_id: string }).todo_id;
        completed[t] = (completed[t] ?? 0) + 1;
      }
    expect(completed).toEqual(Object.fromEntries(TODOS.map((t) => [t, 1])));
    const receipts = events
      .filter((e) => e.type === "acceptance_receipt_recorded")
      .map((e) => (e.data as { acceptance_id: string; receipt: { status: string } }).receipt.status);
    expect(receipts.length).toBeGreaterThanOrEqual(2);
    expect(
      receipts.every((s) => s === "SUCCESS"),
      receipts.join(","),
    ).toBe(true);
    // The worker ran the tasks from snapshots written out beside its run folders.
    const snapshots = readdirSync(join(host, "tasks")).filter((d) => !d.includes(".tmp-"));
    expect(snapshots.length).toBeGreaterThanOrEqual(3);
    const runs = readdirSync(join(host, "runs"));
    for (const r of runs) {
      const started = (await store.readStream(`run-${r}`))[0] as unknown as { data: { task_path: string } };
      expect(started.data.task_path.startsWith(join(host, "tasks"))).toBe(true);
    }

    // gc removes the goal's runs (with no grace period): the goal's task records and every blob they name
    // stay (the runs' observations name the same workspace files as the snapshots), so a third host still
    // writes every task out from the store alone.
    const runStreams = (await store.listStreams({ prefix: "run-" })).filter((s) =>
      runs.includes(s.stream.slice(4)),
    );
    expect(runStreams.length).toBe(runs.length);
    const gc = await prunePostgres(store, {
      candidates: runStreams.map((s) => ({ stream: s.stream, lastRevision: s.lastRevision })),
      dryRun: false,
      jobCutoffMs: 0,
      graceMs: 0,
    });
    expect(gc.streams.length).toBe(runs.length);
    expect(gc.blobs).toBeGreaterThan(0);
    const third = tempDir("loopgate-third-host-");
    const refs = events
      .filter((e) => e.type === "todo_added")
      .map((e) => (e.data as { todo: { task: { path: string; digest: string } } }).todo.task);
    for (const r of refs) {
      const loaded = await goalTaskFile(store, third, id, r.path, r.digest);
      expect(loaded.file.startsWith(join(third, "tasks")), loaded.file).toBe(true);
      expect(loaded.digest).toBe(r.digest);
      expect(existsSync(join(loaded.dir, "heldout"))).toBe(true);
    }
  }, 420_000);

  it("a task file absent here whose snapshot the store lacks is blocked_health, naming the file and the missing snapshot", async () => {
    const id = "pg-tasks-unsnapshotted";
    const { dir, file } = goalFixture(id);
    await newGoal(dir, file);
    const todo = (await goalEvents(id))
      .filter((e) => e.type === "todo_added")
      .map((e) => (e.data as { todo: { id: string; task: { path: string; digest: string } } }).todo)
      .find((t) => t.id === "todo_crlf");
    expect(todo).toBeDefined();
    const key = goalTaskKey(id, todo?.task.path ?? "", todo?.task.digest ?? "");
    // The record is there (goal new stored it): remove it, as a goal recorded before this change would lack it.
    await store.withClient(async (c) => {
      const gone = await c.query(`DELETE FROM ${store.pgSchema}.observations WHERE id = $1`, [key]);
      expect(gone.rowCount).toBe(1);
    });
    renameSync(dir, `${dir}-moved-away`);
    const st = await loopgate(["goal", "next", id, "--store", db.url, "--json"], { cwd: tempDir() });
    expect(st.stdout + st.stderr).toMatch(/blocked_health/);
    expect(st.stdout + st.stderr).toContain(`the store holds no snapshot of ${todo?.task.path}`);
    // The other two todos' tasks are in the store: only todo_crlf is named.
    expect(st.stdout + st.stderr).not.toMatch(/todo_quoted_fields: the task file/);
  }, 120_000);

  it("todo add on a Postgres goal snapshots the new todo's task: its folder gone, the goal stays healthy and a worker runs it", async () => {
    const id = "pg-tasks-added";
    const { dir, file } = goalFixture(id);
    await newGoal(dir, file);
    // The added todo's task lives in another folder Y, which is then moved away as well.
    const other = goalFixture("pg-tasks-other");
    const task = join(other.dir, "goal", "tasks", "unknown-column", "task.yaml");
    const add = await loopgate(
      [
        "todo",
        "add",
        id,
        "todo_added_later",
        "--content",
        "Unknown column, from another folder.",
        "--class",
        "advancement_task",
        "--task",
        task,
        "--store",
        db.url,
      ],
      { cwd: other.dir },
    );
    expect(add.code, show(add)).toBe(0);
    renameSync(dir, `${dir}-moved-away`);
    renameSync(other.dir, `${other.dir}-moved-away`);
    expect(existsSync(task)).toBe(false);
    const next = await loopgate(["goal", "next", id, "--store", db.url, "--json"], { cwd: tempDir() });
    expect(next.stdout + next.stderr).not.toMatch(/blocked_health/);
    const sub = await loopgate(["goal", "submit", id, "--store", db.url, "--json"], { cwd: tempDir() });
    expect(sub.code, show(sub)).toBe(0);
    const w = await worker(tempDir("loopgate-host-"), ["--until-idle"]);
    expect(w.code, show(w)).toBe(0);
    const done = (await goalEvents(id))
      .filter((e) => e.type === "todo_completed")
      .map((e) => (e.data as { todo_id: string }).todo_id)
      .sort();
    expect(done).toEqual([...TODOS, "todo_added_later"].sort());
  }, 420_000);

  it("a forged builder on a worker cannot read the held-out files of the goal's snapshot", async () => {
    const id = "pg-tasks-forged";
    const { dir, file } = goalFixture(id);
    await newGoal(dir, file);
    const host = tempDir("loopgate-host-");
    const checkSh = readFileSync(
      join(dir, "goal/tasks/quoted-fields/heldout/heldout-quoted/check.sh"),
      "utf8",
    );
    const forger = join(tempDir(), "forger.sh");
    writeFileSync(
      forger,
      `#!/bin/sh\ncat ${host}/tasks/*/goal/tasks/*/heldout/*/check.sh > leak.txt 2>&1 || true\n` +
        `cat ${dir}*/goal/tasks/*/heldout/*/check.sh >> leak.txt 2>&1 || true\necho "Fixed! All tests pass."\n`,
    );
    chmodSync(forger, 0o755);
    const sub = await loopgate(["goal", "submit", id, "--builder", forger, "--store", db.url, "--json"], {
      cwd: dir,
    });
    expect(sub.code, show(sub)).toBe(0);
    renameSync(dir, `${dir}-moved-away`);
    const w = await worker(host, ["--once"]);
    expect(w.code, show(w)).toBe(0);
    // The turn ran (one run in the worker's folder), and no todo was completed by the forger.
    const [runId] = readdirSync(join(host, "runs"));
    expect(runId).toBeDefined();
    expect((await goalEvents(id)).some((e) => e.type === "todo_completed")).toBe(false);
    // The held-out file is on this machine, at the path the forger tried, but not in its sandbox.
    const copies = readdirSync(join(host, "tasks")).map((m) =>
      join(host, "tasks", m, "goal/tasks/quoted-fields/heldout/heldout-quoted/check.sh"),
    );
    expect(copies.some((c) => existsSync(c) && readFileSync(c, "utf8") === checkSh)).toBe(true);
    const leak = readFileSync(join(await runTree(host, runId ?? "", db.url), "leak.txt"), "utf8");
    expect(checkSh).toContain("Held-out checks for quoted fields");
    expect(leak).not.toContain("Held-out checks for quoted fields");
  }, 420_000);
});
