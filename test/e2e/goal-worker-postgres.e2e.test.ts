// Goals on Postgres: a goal created in a PostgreSQL store, its turns queued by `goal submit`
// and advanced by worker processes that share nothing but the database (each its own --work-dir).
// Checked by rules read off the goal's own facts: each todo completed once, each turn settled once (one
// accepted writeback, one spend, one ACK), turns never interleaved across workers, and the goal's git
// history, rebuilt on a third "machine" from the store alone, one commit per todo with its turn trailer.
// A worker SIGKILLed mid-turn (inside the run, before and after its objects reach the store, after the
// writeback is recorded) is taken over by another worker once its lease expires.
import { execFileSync } from "node:child_process";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { goalRepo } from "../../src/runner/goal/repo/goal-repo.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { removeTreeSync } from "../../src/workspace/remove-tree.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import {
  type CliResult,
  exampleDir,
  loopgate,
  parseStdout,
  ROOT,
  removeTemps,
  show,
  tempDir,
} from "./cli.js";

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

/** A goal of three advancement todos over sh-csvcol (the bundled example, without gate and monitor). */
function goalFixture(id: string): string {
  const dir = tempDir("loopgate-pg-goal-");
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
todos:
  - { id: todo_quoted_fields, class: advancement_task, content: Quoted fields., task: tasks/quoted-fields/task.yaml }
  - { id: todo_crlf, class: advancement_task, content: CRLF line endings., task: tasks/crlf/task.yaml }
  - { id: todo_unknown_column, class: advancement_task, content: Unknown column exits 2., task: tasks/unknown-column/task.yaml }
`,
  );
  return file;
}

let goals = 0;
async function newPgGoal(): Promise<string> {
  const id = `pg-goal-${++goals}`;
  const r = await loopgate(["goal", "new", goalFixture(id), "--store", db.url, "--json"]);
  expect(r.code, show(r)).toBe(0);
  expect(parseStdout<{ workspace: string }>(r).workspace).toBe(`store:goals/${id}`);
  const sub = await loopgate(["goal", "submit", id, "--store", db.url, "--json"]);
  expect(sub.code, show(sub)).toBe(0);
  expect(parseStdout<{ kind: string; queued: boolean }>(sub)).toMatchObject({
    kind: "goal_turn",
    queued: true,
  });
  return id;
}

let workers = 0;
/** A worker process in its own folder (its "machine"), until the queue is empty. */
function worker(host: string, extra: string[] = [], env: Record<string, string> = {}): Promise<CliResult> {
  return loopgate(
    ["worker", "--store", db.url, "--lease", "5s", "--id", `w${++workers}`, "--work-dir", host, ...extra],
    { cwd: host, env, timeoutMs: 400_000 },
  );
}

const turnOf = (e: RecordedEvent) =>
  (e.data as { identity?: { turn_instance_id?: string } }).identity?.turn_instance_id ?? null;

/** The settlement of every turn and todo, counted from the goal stream. */
async function settlement(goalId: string) {
  const events = await store.readStream(goalStream(goalId));
  const count = (type: string, key: (e: RecordedEvent) => string | null) => {
    const m: Record<string, number> = {};
    for (const e of events) if (e.type === type) m[key(e) ?? "?"] = (m[key(e) ?? "?"] ?? 0) + 1;
    return m;
  };
  const completions = count("todo_completed", (e) => (e.data as { todo_id: string }).todo_id);
  const writebacks = count("turn_writeback_accepted", turnOf);
  const turnSpends = count("turn_quota_spent", turnOf);
  const spends = count("quota_spent", (e) => (e.data as { turn_id: string }).turn_id);
  const acks = count("turn_scheduler_acked", turnOf);
  // Turns never interleave: from a turn's bind to its ACK (or release), no other turn binds.
  let open: string | null = null;
  let interleaved = 0;
  for (const e of events) {
    if (e.type === "turn_bound") {
      if (open !== null) interleaved++;
      open = turnOf(e);
    }
    if ((e.type === "turn_scheduler_acked" || e.type === "turn_released") && turnOf(e) === open) open = null;
  }
  const kinds: Record<string, string> = {};
  for (const e of events)
    if (e.type === "turn_bound") kinds[turnOf(e) ?? "?"] = (e.data as { work: { kind: string } }).work.kind;
  const writebackCommits = events
    .filter((e) => e.type === "turn_writeback_accepted" && kinds[turnOf(e) ?? "?"] === "todo")
    .map((e) => (e.data as { commit: string }).commit);
  return { events, kinds, completions, writebacks, turnSpends, spends, acks, interleaved, writebackCommits };
}

/** The goal's history as the store alone holds it, rebuilt in a fresh folder (a third machine). */
async function historyFromStore(
  goalId: string,
  revision: string,
): Promise<{ commit: string; trailer: string }[]> {
  const host = tempDir("loopgate-third-host-");
  await goalRepo(store, host).tree(goalId, revision);
  const out = execFileSync(
    "git",
    ["log", "--format=%H %(trailers:key=Loopgate-Turn,valueonly,separator=%x2c)", revision],
    { cwd: join(host, "goals", goalId, "workspace"), encoding: "utf8" },
  );
  return out
    .trim()
    .split("\n")
    .map((l) => {
      const [commit = "", trailer = ""] = l.trim().split(" ");
      return { commit, trailer };
    });
}

async function goalStatus(goalId: string) {
  const r = await loopgate(["goal", "status", goalId, "--store", db.url, "--json"]);
  expect(r.code, show(r)).toBe(0);
  return parseStdout<{ revision: string; todos: { id: string; status: string }[] }>(r);
}

/** Every todo done once, every turn settled once, one commit per todo in the store's history. */
async function expectSettledOnce(goalId: string): Promise<void> {
  const status = await goalStatus(goalId);
  expect(status.todos.map((t) => [t.id, t.status])).toEqual(TODOS.map((t) => [t, "done"]));
  const s = await settlement(goalId);
  expect(s.completions).toEqual(Object.fromEntries(TODOS.map((t) => [t, 1])));
  // Every turn that wrote back (a todo's commit, or the acceptance turn's receipts) did so once, was
  // charged once and acknowledged once: three todo turns and one acceptance turn.
  const turns = Object.keys(s.writebacks);
  expect(turns.map((t) => s.kinds[t]).sort()).toEqual(["acceptance", "todo", "todo", "todo"]);
  for (const t of turns) {
    expect(s.writebacks[t], t).toBe(1);
    expect(s.turnSpends[t], t).toBe(1);
    expect(s.acks[t], t).toBe(1);
  }
  for (const [key, n] of Object.entries(s.spends)) expect(n, key).toBe(1);
  expect(s.interleaved).toBe(0);
  // The history: the initial commit and one commit per todo, each with a distinct turn trailer.
  const history = await historyFromStore(goalId, status.revision);
  expect(history.length).toBe(1 + TODOS.length);
  const trailers = history.map((h) => h.trailer).filter(Boolean);
  expect(new Set(trailers).size).toBe(TODOS.length);
  expect(trailers.every((k) => k.startsWith(`${goalId}/`))).toBe(true);
  expect(
    history
      .slice(0, TODOS.length)
      .map((h) => h.commit)
      .sort(),
  ).toEqual([...s.writebackCommits].sort());
}

describe("goals on Postgres, advanced by workers", () => {
  it("two workers in separate folders take the goal's turns one at a time; each turn is settled once", async () => {
    const goalId = await newPgGoal();
    const [a, b] = await Promise.all([
      worker(tempDir("loopgate-host-a-"), ["--until-idle"]),
      worker(tempDir("loopgate-host-b-"), ["--until-idle"]),
    ]);
    expect(a.code, show(a)).toBe(0);
    expect(b.code, show(b)).toBe(0);
    await expectSettledOnce(goalId);
    // The queue holds nothing for the goal any more (the last tick found nothing to do and queued none).
    const left = (await store.queue().list({ unfinished: true })).filter(
      (j) => j.taskPath === `goal:${goalId}`,
    );
    expect(left).toEqual([]);
  }, 420_000);

  it("goal submit of a goal whose turn is queued adds nothing", async () => {
    const goalId = await newPgGoal();
    const again = await loopgate(["goal", "submit", goalId, "--store", db.url, "--json"]);
    expect(again.code, show(again)).toBe(0);
    expect(parseStdout<{ queued: boolean }>(again).queued).toBe(false);
    const queued = (await store.queue().list({ unfinished: true })).filter(
      (j) => j.taskPath === `goal:${goalId}`,
    );
    expect(queued.length).toBe(1);
    const w = await worker(tempDir("loopgate-host-"), ["--until-idle"]);
    expect(w.code, show(w)).toBe(0);
    await expectSettledOnce(goalId);
  }, 420_000);

  it("a goal that does not exist is refused by goal submit, naming it; nothing is queued", async () => {
    const before = (await store.queue().list()).length;
    const r = await loopgate(["goal", "submit", "no-such-goal", "--store", db.url]);
    expect(r.code, show(r)).not.toBe(0);
    expect(r.stderr).toMatch(/no goal no-such-goal/);
    expect((await store.queue().list()).length).toBe(before);
  }, 60_000);

  /** Worker A (its folder deleted after it dies) is SIGKILLed where `env` says; worker B finishes the goal. */
  async function killedAndTakenOver(env: Record<string, string>): Promise<void> {
    const goalId = await newPgGoal();
    const hostA = tempDir("loopgate-host-a-");
    const killed = await worker(hostA, ["--once"], env);
    expect(killed.signal, `expected a SIGKILL at ${JSON.stringify(env)}\n${show(killed)}`).toBe("SIGKILL");
    // The machine is gone, and its mounts with it.
    removeTreeSync(hostA);
    const b = await worker(tempDir("loopgate-host-b-"), ["--until-idle"]);
    expect(b.code, show(b)).toBe(0);
    await expectSettledOnce(goalId);
  }

  it("killed inside the turn's run: the other worker resumes the run from the store", async () => {
    await killedAndTakenOver({ LOOPGATE_FAULT_KILL_AFTER_EVENTS: "6" });
  }, 420_000);

  it("killed after committing locally, before uploading: the commit is absent, the writeback is done again once", async () => {
    await killedAndTakenOver({ LOOPGATE_FAULT_KILL_AT_GOAL_UPLOAD: "before" });
  }, 420_000);

  it("killed after uploading, before the goal stream records it: readback finds the commit in the store and reuses it", async () => {
    await killedAndTakenOver({ LOOPGATE_FAULT_KILL_AT_GOAL_UPLOAD: "after" });
  }, 420_000);

  it("killed after the writeback is recorded (between writeback and spend): spent once, acknowledged once", async () => {
    // The goal stream of a fresh goal before its first turn, and the append that records the writeback.
    const probe = await newPgGoal();
    const w = await worker(tempDir("loopgate-host-"), ["--until-idle"]);
    expect(w.code, show(w)).toBe(0);
    const events = (await store.readStream(goalStream(probe))).filter(
      (e) => e.type !== "turn_lease_heartbeat",
    );
    const at = events.findIndex((e) => e.type === "turn_writeback_accepted");
    expect(at).toBeGreaterThan(0);
    await killedAndTakenOver({ LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS: String(at + 1) });
  }, 420_000);
  it("a person's write to a submitted goal queues its next turn again; to a goal never submitted, nothing", async () => {
    const goalId = await newPgGoal();
    const first = await worker(tempDir("loopgate-host-a-"), ["--until-idle"]);
    expect(first.code, show(first)).toBe(0);
    const queued = async (id: string) =>
      (await store.queue().list({ unfinished: true })).filter((j) => j.taskPath === `goal:${id}`);
    expect(await queued(goalId)).toEqual([]);
    // The goal is done with its work and no worker will queue a turn: a person adds a todo.
    const task = join(ROOT, "examples", "goal-csvcol", "tasks", "quoted-fields", "task.yaml");
    const add = (id: string) =>
      loopgate([
        "todo",
        "add",
        id,
        "todo_again",
        "--content",
        "Quoted fields, checked once more.",
        "--class",
        "advancement_task",
        "--task",
        task,
        "--store",
        db.url,
      ]);
    const r = await add(goalId);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toMatch(/its next turn is queued for the workers \(job /);
    expect(await queued(goalId)).toHaveLength(1);
    const second = await worker(tempDir("loopgate-host-b-"), ["--until-idle"]);
    expect(second.code, show(second)).toBe(0);
    expect((await goalStatus(goalId)).todos.find((t) => t.id === "todo_again")?.status).toBe("done");

    // A goal created but never submitted: the write queues nothing (goal submit starts its workers).
    const lone = `pg-goal-${++goals}`;
    const made = await loopgate(["goal", "new", goalFixture(lone), "--store", db.url, "--json"]);
    expect(made.code, show(made)).toBe(0);
    const r2 = await add(lone);
    expect(r2.code, show(r2)).toBe(0);
    expect(r2.stdout).not.toMatch(/queued/);
    expect(await queued(lone)).toEqual([]);
  }, 420_000);
  it("todo run, todo done and goal accept work on a Postgres goal by hand (done only when persisted); goal revert is refused naming why", async () => {
    const id = `pg-goal-${++goals}`;
    const made = await loopgate(["goal", "new", goalFixture(id), "--store", db.url, "--json"]);
    expect(made.code, show(made)).toBe(0);
    const host = tempDir("loopgate-by-hand-");
    const at = (args: string[]) => loopgate([...args, "--store", db.url], { cwd: host });
    const run = await at(["todo", "run", id, "todo_quoted_fields", "--json"]);
    expect(run.code, show(run)).toBe(0);
    const env = parseStdout<{ run_id: string; status: string }>(run);
    expect(env.status).toBe("SUCCESS");
    // The run is in the database: its events read back from there; its change is read from there too,
    // and since todo run writes nothing back, it is not the todo's evidence (done means persisted).
    expect((await store.readStream(`run-${env.run_id}`)).at(-1)?.type).toBe("run_finished");
    const done = await at(["todo", "done", id, "todo_quoted_fields", "--evidence", env.run_id]);
    expect(done.code, show(done)).toBe(1);
    expect(done.stderr).toMatch(/rule durable_writeback_before_done: .*\(bin\/csvcol\)/);
    expect((await goalStatus(id)).todos.find((t) => t.id === "todo_quoted_fields")?.status).toBe("open");
    // Acceptance on the unchanged revision fails, and its receipt is recorded.
    const accept = await at(["goal", "accept", id, "--json"]);
    expect(accept.code, show(accept)).toBe(1);
    expect(parseStdout<{ accepted: boolean }>(accept).accepted).toBe(false);
    const receipts = (await store.readStream(goalStream(id))).filter(
      (e) => e.type === "acceptance_receipt_recorded",
    );
    expect(receipts.map((e) => (e.data as { receipt: { status: string } }).receipt.status)).toEqual([
      "ESCALATED",
    ]);
    const revert = await at([
      "goal",
      "revert",
      id,
      "abcdef12",
      "todo_x",
      "--content",
      "x",
      "--class",
      "user_action",
      "--reason",
      "r",
    ]);
    expect(revert.code, show(revert)).toBe(2);
    expect(revert.stderr).toMatch(/goal revert works on a goal in a folder store/);
  }, 300_000);
});
