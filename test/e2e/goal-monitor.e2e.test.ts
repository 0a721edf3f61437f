// A continuous monitor's cadence and its failed polls, through the CLI on both stores: a goal of one
// monitor (its poll a script beside the goal file that prints a feed, or fails while mode.txt says so)
// and one acceptance item. Asserted on the recorded facts (each poll's `at` and `next_due_at`, the
// failure count, the block, the spend), never on how long anything took: the test only waits until a
// recorded next_due_at has passed, and a slow machine only makes that later, which is still due.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

const W = "todo_watch_feed";

/** The poll: the feed, or exit 3 while mode.txt says "fail". */
const POLL = `#!/bin/sh
d="$(dirname "$0")"
if [ "$(cat "$d/mode.txt")" = "fail" ]; then echo "feed unreachable" >&2; exit 3; fi
cat "$d/feed.txt"
`;

interface Fixture {
  dir: string;
  file: string;
  setMode(mode: "ok" | "fail"): void;
}

/** every 1 s, the wait doubling per quiet poll up to 3 s; three failed polls in a row stop it. */
function fixture(id: string, mode: "ok" | "fail"): Fixture {
  const dir = tempDir("loopgate-monitor-");
  mkdirSync(join(dir, "ws"));
  mkdirSync(join(dir, "tasks", "ok"), { recursive: true });
  writeFileSync(join(dir, "ws", "README.md"), "the feed reader\n");
  writeFileSync(
    join(dir, "tasks", "ok", "task.yaml"),
    "id: readme-present\nprompt: Keep the README.\nworkspace: ../../ws\ngates:\n  - id: readme\n    static: { path: README.md, exists: true }\n",
  );
  writeFileSync(join(dir, "poll.sh"), POLL);
  writeFileSync(join(dir, "feed.txt"), "item 1\n");
  writeFileSync(join(dir, "mode.txt"), `${mode}\n`);
  const file = join(dir, "goal.yaml");
  writeFileSync(
    file,
    `id: ${id}
objective: Watch an upstream feed; a change asks a person to look.
workspace: ws
vision: watch the feed; a change asks a person to look
builder: oracle
acceptance:
  - { task: tasks/ok/task.yaml }
todos:
  - id: ${W}
    class: continuous_monitor
    content: Watch the upstream feed.
    poll:
      run: ["sh", "poll.sh"]
      every: 1s
      max_no_change_before_replan: 50
      backoff: { factor: 2, max: 3s }
      max_failures: 3
`,
  );
  return { dir, file, setMode: (m) => writeFileSync(join(dir, "mode.txt"), `${m}\n`) };
}

type Ev = { type: string; data: Record<string, unknown> };
const MONITOR_FACTS = new Set([
  "monitor_baseline_recorded",
  "monitor_no_change_recorded",
  "monitor_poll_failed",
]);
/** Each poll fact: its type, its wait (next_due_at − at, in seconds) and its failure count. */
const polls = (events: Ev[]) =>
  events
    .filter((e) => MONITOR_FACTS.has(e.type))
    .map((e) => ({
      type: e.type,
      wait: (Date.parse(String(e.data.next_due_at)) - Date.parse(String(e.data.at))) / 1000,
      failures: e.data.consecutive_failures ?? null,
    }));
/** Waits until the last poll's recorded next_due_at has passed. */
async function untilDue(events: Ev[]): Promise<void> {
  const last = events.filter((e) => MONITOR_FACTS.has(e.type)).at(-1);
  const due = Date.parse(String(last?.data.next_due_at));
  expect(Number.isFinite(due)).toBe(true);
  await sleep(Math.max(0, due - Date.now() + 200));
}
/** The turns each monitor poll was charged, in order (a turn's spend follows its writeback). */
function monitorCharges(events: Ev[]): number[] {
  const out: number[] = [];
  let polled = false;
  for (const e of events) {
    if (MONITOR_FACTS.has(e.type)) polled = true;
    if (e.type === "turn_quota_spent" && polled) {
      out.push((e.data.usage as { turns: number }).turns);
      polled = false;
    }
  }
  return out;
}
const lastLine = (stdout: string) =>
  JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;

/** What a person sees of the stop: the blocked todo in `goal status`, the action in `goal next`. */
async function expectStopShown(id: string, store: string, cwd: string, monitorSpend: Record<string, number>) {
  const st = await loopgate(["goal", "status", id, "--store", store, "--json"], { cwd });
  expect(st.code, show(st)).toBe(0);
  const status = parseStdout<{
    runtimeState: string;
    todos: { id: string; status: string; blockReason: string }[];
    spend: { kind: string }[];
  }>(st);
  expect(status.runtimeState).toBe("operator_gate");
  // Spend by kind: the monitor's turns charged, and its failed polls settled but uncharged.
  expect(status.spend.find((k) => k.kind === "monitor")).toMatchObject(monitorSpend);
  const text = await loopgate(["goal", "status", id, "--store", store], { cwd });
  expect(text.stdout).toMatch(/spent by kind: .*monitor \d+ turns? \(3 uncharged: failed polls\)/);
  expect(status.todos.find((t) => t.id === W)).toMatchObject({
    status: "blocked",
    blockReason: expect.stringMatching(
      /rule monitor_failures: 3 polls failed in a row \(max_failures 3\).*exited 3/,
    ),
  });
  const next = await loopgate(["goal", "next", id, "--store", store, "--json"], { cwd });
  expect(next.code, show(next)).toBe(0);
  const c = parseStdout<{
    user_channel: { action_required: boolean; actions: { todo_id: string; action: string }[] };
    next_cli_actions: { argv: string[] }[];
    monitors: unknown[];
  }>(next);
  expect(c.user_channel.action_required).toBe(true);
  expect(c.user_channel.actions).toEqual([
    expect.objectContaining({ todo_id: W, action: "monitor_stopped" }),
  ]);
  expect(c.next_cli_actions.map((a) => a.argv.slice(0, 5))).toContainEqual([
    "loopgate",
    "todo",
    "reopen",
    id,
    W,
  ]);
  // Not polled any more: no monitor is listed as due.
  expect(c.monitors).toEqual([]);
}

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
}, 60_000);
afterAll(async () => {
  removeTemps();
  await db?.drop();
});

describe("a continuous monitor: backoff by policy, bounded failed polls, honest costs", () => {
  it("SQLite: the wait grows per quiet poll to its max, failed polls back off and stop at max_failures, a reopen resets", async () => {
    const id = "monitor-sqlite";
    const f = fixture(id, "ok");
    const store = join(f.dir, "store");
    const lg = (...args: string[]) =>
      loopgate([...args, "--store", store], { cwd: f.dir, timeoutMs: 120_000 });
    const events = async (): Promise<Ev[]> => {
      const s = SqliteEventStore.open(join(store, "events.db"), { readonly: true });
      try {
        return (await s.readStream(goalStream(id))) as never;
      } finally {
        await s.close();
      }
    };
    expect((await lg("goal", "new", f.file)).code).toBe(0);

    // The acceptance turn, then the monitor's baseline; nothing else is due: idle (exit 1).
    const a = await lg("goal", "run", id, "--until-idle", "--json");
    expect(a.code, show(a)).toBe(1);
    await untilDue(await events());
    const b = await lg("goal", "run", id, "--until-idle", "--json");
    expect(b.code, show(b)).toBe(1);
    // The feed goes down: `goal run` sleeps to each recorded wake-up by itself and stops at the bound.
    f.setMode("fail");
    await untilDue(await events());
    const c = await lg("goal", "run", id, "--json");
    expect(c.code, show(c)).toBe(1);
    expect(lastLine(c.stdout)).toMatchObject({ stop: "waiting_person" });

    const ev = await events();
    // By hand: baseline 1 s, the first quiet poll 1 s; from the second quiet poll in a row (unchanged or
    // failed) the wait doubles: 2 s, then 4 s cut to the max, 3 s.
    expect(polls(ev)).toEqual([
      { type: "monitor_baseline_recorded", wait: 1, failures: null },
      { type: "monitor_no_change_recorded", wait: 1, failures: null },
      { type: "monitor_poll_failed", wait: 2, failures: 1 },
      { type: "monitor_poll_failed", wait: 3, failures: 2 },
      { type: "monitor_poll_failed", wait: 3, failures: 3 },
    ]);
    // The third failure and the block are one append; nothing was polled after it.
    const third = ev.findIndex((e) => e.type === "monitor_poll_failed" && e.data.consecutive_failures === 3);
    expect(ev[third + 1]).toMatchObject({ type: "todo_blocked", data: { todo_id: W } });
    // Costs: a poll that observed is one turn; a failed poll delivered nothing and is charged nothing.
    expect(monitorCharges(ev)).toEqual([1, 1, 0, 0, 0]);
    await expectStopShown(id, store, f.dir, { turns: 2, settled: 5, uncharged: 3 });

    // Stopped means stopped: a tick now binds no turn and polls nothing.
    const bound = ev.filter((e) => e.type === "turn_bound").length;
    const idle = await lg("goal", "tick", id);
    expect(idle.code, show(idle)).not.toBe(2);
    expect((await events()).filter((e) => e.type === "turn_bound")).toHaveLength(bound);

    // A person repairs the feed and reopens: due at once, the cadence back at 1 s, the count at 0.
    f.setMode("ok");
    const reopen = await lg("todo", "reopen", id, W, "--note", "the feed is back");
    expect(reopen.code, show(reopen)).toBe(0);
    const t = await lg("goal", "tick", id);
    expect(t.code, show(t)).toBe(0);
    expect(polls(await events()).at(-1)).toEqual({
      type: "monitor_no_change_recorded",
      wait: 1,
      failures: null,
    });
  }, 240_000);

  it("PostgreSQL: a monitor whose poll fails from the start stops at max_failures, shown in goal next and goal status", async () => {
    const id = "monitor-pg";
    const f = fixture(id, "fail");
    const lg = (...args: string[]) =>
      loopgate([...args, "--store", db.url], { cwd: f.dir, timeoutMs: 120_000 });
    expect((await lg("goal", "new", f.file)).code).toBe(0);
    const r = await lg("goal", "run", id, "--json");
    expect(r.code, show(r)).toBe(1);
    expect(lastLine(r.stdout)).toMatchObject({ stop: "waiting_person" });
    const pg = await PostgresEventStore.open(db.url);
    let ev: Ev[];
    try {
      ev = (await pg.readStream(goalStream(id))) as never;
    } finally {
      await pg.close();
    }
    // A failed first poll is retried at the cadence (1 s), then 2 s, then 4 s cut to the max, 3 s.
    expect(polls(ev)).toEqual([
      { type: "monitor_poll_failed", wait: 1, failures: 1 },
      { type: "monitor_poll_failed", wait: 2, failures: 2 },
      { type: "monitor_poll_failed", wait: 3, failures: 3 },
    ]);
    expect(ev.filter((e) => e.type === "todo_blocked")).toHaveLength(1);
    expect(monitorCharges(ev)).toEqual([0, 0, 0]);
    await expectStopShown(id, db.url, f.dir, { turns: 0, settled: 3, uncharged: 3 });
  }, 240_000);
});
