import { execFileSync } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/cli/output/context.js";
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import type { GoalState } from "../../src/core/goal/goal-state-shape.js";
import { goalState } from "../../src/runner/goal/goal-engine.js";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { type CliResult, removeTemps, show, tempDir } from "./cli.js";
import { GOAL, lg, newGoal } from "./goal-support.js";

// The kill-point e2e of governed turns: `goal tick` SIGKILLed after every durable append of the turn (goal
// stream and, inside the run, the run's log), then ticked again, ends in the state of an uninterrupted
// tick: one writeback commit with the turn's trailer, one completion, one spend, one ACK.
afterAll(removeTemps);

const TURN = `${GOAL}/oracle/t1`;
const TODO = "todo_quoted_fields";

async function goalEvents(store: string): Promise<RecordedEvent[]> {
  const s = await openStore(store, "read");
  try {
    return await s.readStream(goalStream(GOAL));
  } finally {
    await s.close();
  }
}

const git = (store: string, ...args: string[]) =>
  execFileSync("git", args, { cwd: join(store, "goals", GOAL, "workspace"), encoding: "utf8" }).trim();

/** The commits on the goal workspace's branch whose Loopgate-Turn trailer is exactly `key`. */
function trailerCommits(store: string, key: string): string[] {
  return git(store, "log", "--format=%H %(trailers:key=Loopgate-Turn,valueonly)")
    .split("\n")
    .map((l) => l.trim().split(" "))
    .filter(([, v]) => v === key)
    .map(([h]) => h as string);
}

/** What must be the same after any crash and resume: the facts of turn t1, not their timestamps or ids. */
function settled(store: string, s: GoalState) {
  const t = s.turns[TURN];
  const todo = s.todos[TODO];
  const tree = (rev: string | undefined) => (rev ? git(store, "rev-parse", `${rev}^{tree}`) : null);
  return {
    todo: { status: todo?.status, run: todo?.completion?.runId },
    turn: {
      work: t?.work,
      base_is_initial: t?.baseRevision === s.workspace?.initial_revision,
      run: t?.host?.runRef,
      result: t?.result?.kind === "envelope" ? t.result.status : null,
      receipt: t?.receipt?.kind === "run" ? t.receipt.receipt.status : null,
      writeback_tree: tree(t?.writeback?.newRevision),
      spend: t?.spend,
      acked: t?.acked ? { mode: t.acked.mode, action: t.acked.hint.action } : null,
      prepared: t?.prepared,
      failure: t?.failure,
      released: t?.released,
    },
    spends: s.spends
      .filter((x) => x.turnId === TURN)
      .map(({ turns, tokens, costUsd: cost_usd }) => ({ turns, tokens, cost_usd })),
    anomalies: s.anomalies,
  };
}

/** The counts the issue names: exactly one of each per turn. */
function counts(store: string, events: RecordedEvent[]) {
  const of = (type: string, pred: (e: RecordedEvent) => boolean = () => true) =>
    events.filter((e) => e.type === type && pred(e)).length;
  const mine = (e: RecordedEvent) =>
    (e.data as { identity?: { turn_instance_id: string } }).identity?.turn_instance_id === "t1";
  return {
    commits: trailerCommits(store, TURN).length,
    completions: of("todo_completed", (e) => (e.data as { todo_id: string }).todo_id === TODO),
    spends: of("quota_spent", (e) => (e.data as { turn_id: string }).turn_id === TURN),
    turn_spends: of("turn_quota_spent", mine),
    acks: of("turn_scheduler_acked", mine),
    writebacks: of("turn_writeback_accepted", mine),
  };
}
const ONE_EACH = { commits: 1, completions: 1, spends: 1, turn_spends: 1, acks: 1, writebacks: 1 };

const tick = (store: string, env: Record<string, string> = {}): Promise<CliResult> =>
  import("./cli.js").then(({ loopgate }) =>
    loopgate(["goal", "tick", GOAL, "--store", store, "--json"], { env }),
  );

/** A freshly created example goal, made once; each kill point starts from a copy of it. */
let template = "";
function freshGoal(): string {
  const store = join(tempDir("loopgate-tick-kill-"), "store");
  cpSync(template, store, { recursive: true, verbatimSymlinks: true });
  return store;
}

let reference: ReturnType<typeof settled>;
let initialEvents = 0;
/** Goal-stream sizes right after each append of an uninterrupted tick (heartbeats not counted). */
let goalPoints: number[] = [];
/** The run's own events (its lease not counted), each a kill point inside the run. */
let runPoints: number[] = [];

beforeAll(async () => {
  template = await newGoal();
  const store = freshGoal();
  initialEvents = (await goalEvents(store)).length;
  const r = await tick(store);
  expect(r.code, show(r)).toBe(0);
  const events = await goalEvents(store);
  reference = settled(store, goalState(events));
  expect(counts(store, events)).toEqual(ONE_EACH);
  // An append's last event is a kill point; the events written with it in one append are not.
  const sameAppend = new Set(["todo_completed", "goal_revision_recorded", "quota_spent"]);
  goalPoints = [];
  for (let n = initialEvents + 1; n < events.length; n++)
    if (!sameAppend.has(events[n]?.type ?? "")) goalPoints.push(n);
  const runEvents = await lg(store, "events", reference.turn.run ?? "", "--json");
  const types = runEvents.stdout
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { type: string }).type);
  // The after-builder observation is appended with its changes and findings: only its last is a point.
  const runTypes = types.filter((t) => !t.startsWith("run_lease_"));
  const withObservation = new Set(["workspace_changed", "finding_recorded"]);
  runPoints = [];
  for (let n = 1; n <= runTypes.length; n++) if (!withObservation.has(runTypes[n] ?? "")) runPoints.push(n);
}, 60_000);

describe.concurrent("goal tick survives a SIGKILL at every kill point of a turn", () => {
  it("the uninterrupted reference settled the turn once, with the change committed", () => {
    expect(reference.todo.status).toBe("done");
    expect(reference.turn.acked).toEqual({ mode: "host_match", action: "run_now" });
    expect(goalPoints.length).toBeGreaterThanOrEqual(10);
    expect(runPoints.length).toBeGreaterThanOrEqual(8);
    // At least 30 kill points across the turn, counting the double kills below.
    expect(goalPoints.length + runPoints.length + 10).toBeGreaterThanOrEqual(30);
  });

  /** Kills the tick where `env` says, ticks again (once more after a second kill), and compares. */
  async function crashAndResume(envs: Record<string, string>[]): Promise<void> {
    const store = freshGoal();
    for (const env of envs) {
      const k = await tick(store, env);
      expect(k.signal, `expected a kill at ${JSON.stringify(env)}\n${show(k)}`).toBe("SIGKILL");
    }
    const r = await tick(store);
    // A kill after the turn's last fact leaves nothing to resume: the next tick takes the next todo.
    expect([0], show(r)).toContain(r.code);
    const events = await goalEvents(store);
    expect(counts(store, events)).toEqual(ONE_EACH);
    expect(settled(store, goalState(events))).toEqual(reference);
    expect(git(store, "status", "--porcelain")).toBe("");
  }

  it("after each goal-stream append of the turn", async () => {
    for (const n of goalPoints) await crashAndResume([{ LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS: String(n) }]);
  }, 600_000);

  it("inside the run, after each of its events", async () => {
    for (const n of runPoints) await crashAndResume([{ LOOPGATE_FAULT_KILL_AFTER_EVENTS: String(n) }]);
  }, 600_000);

  it("inside the writeback: the commit written but the branch not moved, and the branch moved but the work tree not", async () => {
    // commit_written: readback finds no commit on the branch (absent) and commits again, once;
    // ref_moved: readback finds the commit (committed), reuses it and finishes moving the work tree.
    for (const point of ["commit_written", "ref_moved"])
      await crashAndResume([{ LOOPGATE_FAULT_KILL_IN_WRITEBACK: point }]);
  }, 600_000);

  it("twice: again while the resumed tick reads back and settles", async () => {
    // The resumed tick's own appends: after its lease takeover (+1), its readback or next fact (+2, +3).
    const firsts = [goalPoints[2], goalPoints[3], goalPoints[4], goalPoints[6], goalPoints[7]] as number[];
    for (const first of firsts)
      for (const extra of [2, 3])
        await crashAndResume([
          { LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS: String(first) },
          { LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS: String(first + extra) },
        ]);
  }, 600_000);
});
