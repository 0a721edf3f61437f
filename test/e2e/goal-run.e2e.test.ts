// loopgate goal run and loopgate scheduler on the bundled goal example: governed turns one at a time,
// the stop at acceptance and at the user gate (exit 1, who must act), and what scheduling never does.
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { loopgate, removeTemps, show, tempDir } from "./cli.js";
import { GOAL, head, lg, newGoal, status } from "./goal-support.js";

afterAll(removeTemps);

const ADVANCEMENT = ["todo_quoted_fields", "todo_crlf", "todo_unknown_column"];
const ws = (store: string) => join(store, "goals", GOAL, "workspace");
const commits = (store: string) =>
  execFileSync("git", ["log", "--format=%s%n%b%x00", "--reverse"], { cwd: ws(store), encoding: "utf8" })
    .split("\0")
    .map((c) => c.trim())
    .filter(Boolean);

/** The goal stream's events, read from the store itself. */
async function goalEvents(store: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const s = SqliteEventStore.open(join(store, "events.db"), { readonly: true });
  try {
    return (await s.readStream(`goal-${GOAL}`)) as never;
  } finally {
    await s.close();
  }
}

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("goal run on the example goal", () => {
  it("completes the fixes one governed turn each, proves acceptance in a turn of its own, then stops at the user gate naming who must act", async () => {
    const store = await newGoal();
    const first = await lg(store, "goal", "run", GOAL, "--json");
    expect(first.code, show(first)).toBe(1);
    const lines = jsonLines(first.stdout);
    const summary = lines.at(-1);
    expect(summary).toMatchObject({ goal: GOAL, summary: true, exit_code: 1, stop: "waiting_person" });
    // Each fix is done, by one turn of its own: one commit per todo, in order, each with its turn identity.
    const s = await status(store);
    for (const id of ADVANCEMENT) expect(s.todos.find((t) => t.id === id)?.status, id).toBe("done");
    const log = commits(store);
    expect(log).toHaveLength(1 + ADVANCEMENT.length);
    const turnIds = log.slice(1).map((c, i) => {
      expect(c).toContain(ADVANCEMENT[i]);
      return /turn (t\d+)/.exec(c)?.[1];
    });
    expect(new Set(turnIds).size).toBe(ADVANCEMENT.length);
    // The facts: one bind, one writeback, one spend and one ACK per turn (three fixes, then the acceptance
    // turn, which commits nothing to the workspace and records the receipts, then — the goal now waits on
    // a person — the monitor's first poll, its baseline), and nothing else spent.
    const events = await goalEvents(store);
    const count = (type: string) => events.filter((e) => e.type === type).length;
    expect(count("turn_bound")).toBe(5);
    expect(count("turn_writeback_accepted")).toBe(5);
    expect(count("turn_quota_spent")).toBe(5);
    expect(count("turn_scheduler_acked")).toBe(5);
    expect(count("acceptance_receipt_recorded")).toBe(3);
    expect(count("monitor_baseline_recorded")).toBe(1);
    expect(count("monitor_poll_failed")).toBe(0);
    expect(
      events
        .filter((e) => e.type === "turn_bound")
        .map((e) => e.data.work as { todo_id?: string; kind: string })
        .map((w) => w.todo_id ?? w.kind),
    ).toEqual([...ADVANCEMENT, "acceptance", "todo_watch_reports"]);
    // The run itself ended saying who must act (the tick after the monitor's poll).
    expect(summary).toMatchObject({ who: expect.stringMatching(/a person deciding publish/) });
    expect(s.revision).toBe(head(store));

    // goal accept still proves it by hand (the revision did not move: it holds).
    const accept = await lg(store, "goal", "accept", GOAL);
    expect(accept.code, show(accept)).toBe(0);
    const gated = await lg(store, "goal", "run", GOAL);
    expect(gated.code, show(gated)).toBe(1);
    expect(gated.stdout).toMatch(/waiting_person after 1 tick\(s\): .*must decide todo_publish_gate/);
    expect(gated.stdout).toMatch(/who must act: a person deciding publish/);
    expect(gated.stdout).toMatch(
      new RegExp(`next: .*gate approve ${GOAL} todo_publish_gate --store ${store}`),
    );
    // Waiting on a person spent nothing and bound no turn (the monitor is not due again for an hour).
    const after = await goalEvents(store);
    expect(after.filter((e) => e.type === "turn_bound")).toHaveLength(5);
    expect(after.filter((e) => e.type === "turn_quota_spent")).toHaveLength(5);

    const approve = await lg(store, "gate", "approve", GOAL, "todo_publish_gate", "--note", "ship it");
    expect(approve.code, show(approve)).toBe(0);
    const next = await lg(store, "goal", "run", GOAL, "--json");
    expect(next.code, show(next)).toBe(1);
    // The gate is decided; what is left only a person can do (tag and publish the release).
    expect(jsonLines(next.stdout).at(-1)).toMatchObject({ stop: "waiting_person" });
    expect(JSON.stringify(jsonLines(next.stdout))).not.toContain("todo_publish_gate");
    expect(commits(store)).toHaveLength(4);
  }, 300_000);

  it("a stopped goal is not ticked (exit 1, resume named); a dirty workspace is blocked health (exit 2); nothing is bound", async () => {
    const store = await newGoal();
    expect((await lg(store, "goal", "stop", GOAL)).code).toBe(0);
    const stopped = await lg(store, "goal", "run", GOAL);
    expect(stopped.code, show(stopped)).toBe(1);
    expect(stopped.stdout).toMatch(/stopped/);
    expect(stopped.stdout).toMatch(new RegExp(`goal resume ${GOAL}`));
    expect((await lg(store, "goal", "resume", GOAL)).code).toBe(0);
    writeFileSync(join(ws(store), "stray.txt"), "not committed\n");
    const dirty = await lg(store, "goal", "run", GOAL, "--json");
    expect(dirty.code, show(dirty)).toBe(2);
    expect(jsonLines(dirty.stdout).at(-1)).toMatchObject({ exit_code: 2, stop: "blocked_health" });
    expect((await goalEvents(store)).filter((e) => e.type === "turn_bound")).toHaveLength(0);
  }, 120_000);

  it("--once makes exactly one governed turn: one todo done, one commit, exit 0", async () => {
    const store = await newGoal();
    const r = await lg(store, "goal", "run", GOAL, "--once", "--json");
    expect(r.code, show(r)).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ turn: 1, todo: "todo_quoted_fields", outcome: "advanced" });
    expect(lines[1]).toMatchObject({ summary: true, exit_code: 0, stop: "advanced", turns: 1 });
    const s = await status(store);
    expect(s.todos.filter((t) => t.status === "done").map((t) => t.id)).toEqual(["todo_quoted_fields"]);
    expect(commits(store)).toHaveLength(2);
  }, 120_000);

  it("a todo whose runs fail backs off by the recorded turns: a restart honours it, a person's write resets it", async () => {
    const store = await newGoal();
    const bound = async () => (await goalEvents(store)).filter((e) => e.type === "turn_bound").length;
    // --noop: every run is ESCALATED, so no receipt, no writeback: the same contract after each turn.
    const first = await lg(store, "goal", "run", GOAL, "--noop", "--until-idle", "--json");
    expect(first.code, show(first)).toBe(1);
    const lines = jsonLines(first.stdout);
    expect(lines.slice(0, -1).map((l) => l.outcome)).toEqual(["failed", "failed"]);
    expect(lines.at(-1)).toMatchObject({ stop: "failed", turns: 2 });
    expect(String(lines.at(-1)?.why)).toMatch(/no change for 1 turn\(s\) on the same contract; backoff 30s/);
    expect(await bound()).toBe(2);
    // A new process reads the backoff from the log: it does not tick before the wait is over.
    const again = await lg(store, "goal", "run", GOAL, "--noop", "--until-idle", "--json");
    expect(again.code, show(again)).toBe(1);
    expect(jsonLines(again.stdout).at(-1)).toMatchObject({ stop: "idle", turns: 0 });
    expect(await bound()).toBe(2);
    // Nothing was spent by the failed turns, nor by scheduling.
    expect((await goalEvents(store)).filter((e) => e.type === "turn_quota_spent")).toHaveLength(0);
    // A person's write (stop, then resume) is the reset token: the next run ticks at once.
    expect((await lg(store, "goal", "stop", GOAL)).code).toBe(0);
    expect((await lg(store, "goal", "resume", GOAL)).code).toBe(0);
    const reset = await lg(store, "goal", "run", GOAL, "--noop", "--until-idle", "--json");
    expect(reset.code, show(reset)).toBe(1);
    expect(await bound()).toBe(4);
  }, 300_000);

  it("--once and --until-idle together are refused (exit 2), naming both", async () => {
    const store = await newGoal();
    const r = await lg(store, "goal", "run", GOAL, "--once", "--until-idle");
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/--once or --until-idle, not both/);
  }, 60_000);
});

describe("loopgate scheduler", () => {
  it("--once hosts every active goal of the store: the example's fixes land, then it stops (exit 0)", async () => {
    const store = await newGoal();
    const r = await lg(store, "scheduler", "--once", "--json");
    expect(r.code, show(r)).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines.at(-1)).toMatchObject({ summary: true, exit_code: 0, failures: 0 });
    expect(lines.filter((l) => l.goal === GOAL).length).toBeGreaterThan(0);
    expect((await status(store)).todos.find((t) => t.id === "todo_quoted_fields")?.status).toBe("done");
  }, 300_000);

  it("a postgres:// store is opened as PostgreSQL (unreachable: a clear error naming it), never read as ./.loopgate", async () => {
    const cwd = tempDir("loopgate-goal-pg-cwd-");
    for (const args of [
      ["scheduler", "--once"],
      ["goal", "run", GOAL],
      ["goal", "status", GOAL],
    ]) {
      const r = await loopgate([...args, "--store", "postgres://nobody@127.0.0.1:1/none"], { cwd });
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toMatch(
        /store postgres:\/\/nobody@127\.0\.0\.1:1\/none: PostgreSQL refused the connection/,
      );
      expect(existsSync(join(cwd, ".loopgate")), show(r)).toBe(false);
    }
  }, 60_000);
});
