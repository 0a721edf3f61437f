// The kill campaign's goal-turn checks must be able to fail: each is handed a goal stream (and git's
// trailer lines) broken the way it must detect — two spends for one turn, two trailer commits, a
// completion without writeback — and a settled turn it must pass.
import { describe, expect, it } from "vitest";
import { type TurnRef, trailerCommits, turnCounts, turnProblems } from "../../bench/campaign/goal-checks.js";
import { emptyGoalTally, goalClean } from "../../bench/campaign/goal-report.js";
import type { LoggedEvent } from "../../bench/campaign/log-checks.js";

const T: TurnRef = { key: "g/oracle/t1", instance: "t1", todo: "todo_a" };
const identity = (instance: string) => ({
  identity: { goal_id: "g", agent_id: "oracle", turn_instance_id: instance },
});

/** One goal stream from event bodies, revisions and positions in order. */
function goalLog(
  entries: readonly (readonly [type: string, data: Record<string, unknown>])[],
): LoggedEvent[] {
  return entries.map(([type, data], i) => ({
    stream: "goal-g",
    revision: i,
    position: i + 1,
    id: `e${i}`,
    type,
    data,
  }));
}

const writeback = (instance = "t1") => ["turn_writeback_accepted", identity(instance)] as const;
const completion = (todo = "todo_a") => ["todo_completed", { todo_id: todo }] as const;
const spend = (turn = "g/oracle/t1") => ["quota_spent", { turn_id: turn, turns: 1 }] as const;
const turnSpend = (instance = "t1") => ["turn_quota_spent", identity(instance)] as const;
const ack = (instance = "t1") => ["turn_scheduler_acked", identity(instance)] as const;
const settledTurn = [writeback(), completion(), spend(), turnSpend(), ack()];
/** Lines as `git log --format='%H %(trailers:key=Loopgate-Turn,valueonly)'` prints them. */
const gitLog = (...lines: string[]) => lines.join("\n");

describe("trailerCommits", () => {
  it("takes the commits whose trailer is exactly the turn's key, not another turn's or none", () => {
    const log = gitLog("aaa g/oracle/t1", "bbb g/oracle/t10", "ccc", "ddd g/oracle/t2", "");
    expect(trailerCommits(log, T.key)).toEqual(["aaa"]);
    expect(trailerCommits(gitLog("aaa g/oracle/t1", "eee g/oracle/t1"), T.key)).toEqual(["aaa", "eee"]);
  });
});

describe("turnProblems", () => {
  it("passes a turn whose facts are each there once, with other turns' facts beside them", () => {
    const log = goalLog([
      ...settledTurn,
      writeback("t2"),
      completion("todo_b"),
      spend("g/oracle/t2"),
      turnSpend("t2"),
      ack("t2"),
    ]);
    const c = turnCounts(log, trailerCommits(gitLog("aaa g/oracle/t1", "bbb g/oracle/t2"), T.key), T);
    expect(c).toEqual({ commits: 1, writebacks: 1, completions: 1, spends: 1, turn_spends: 1, acks: 1 });
    expect(turnProblems(c, T)).toEqual({ doubled: [], missing: [], unwritten: [] });
  });

  it("reports two spends keyed by one turn as doubled", () => {
    const c = turnCounts(goalLog([...settledTurn, spend()]), ["aaa"], T);
    const p = turnProblems(c, T);
    expect(p.doubled).toEqual([
      "turn g/oracle/t1: 2 quota spends keyed by the turn (quota_spent), must be 1",
    ]);
    expect(p.missing).toEqual([]);
  });

  it("reports two commits with the turn's trailer as doubled", () => {
    const commits = trailerCommits(gitLog("aaa g/oracle/t1", "bbb g/oracle/t1"), T.key);
    const p = turnProblems(turnCounts(goalLog(settledTurn), commits, T), T);
    expect(p.doubled).toEqual(["turn g/oracle/t1: 2 commits with the Loopgate-Turn trailer, must be 1"]);
  });

  it("reports a second completion, a second ACK and a second turn spend, one line each", () => {
    const p = turnProblems(
      turnCounts(goalLog([...settledTurn, completion(), ack(), turnSpend()]), ["aaa"], T),
      T,
    );
    expect(p.doubled).toHaveLength(3);
    expect(p.doubled.join("\n")).toMatch(/2 completions of the todo/);
    expect(p.doubled.join("\n")).toMatch(/2 scheduler ACKs/);
    expect(p.doubled.join("\n")).toMatch(/2 turn quota spends/);
  });

  it("reports a completion without a writeback, and one without a trailer commit", () => {
    const noWriteback = goalLog([completion(), spend(), turnSpend(), ack()]);
    const p = turnProblems(turnCounts(noWriteback, ["aaa"], T), T);
    expect(p.unwritten).toEqual([
      "todo todo_a completed, but turn g/oracle/t1 has 0 writeback(s) and 1 trailer commit(s)",
    ]);
    expect(p.missing).toEqual(["turn g/oracle/t1: no accepted writebacks (turn_writeback_accepted)"]);
    const noCommit = turnProblems(turnCounts(goalLog(settledTurn), [], T), T);
    expect(noCommit.unwritten).toHaveLength(1);
    expect(noCommit.missing).toEqual(["turn g/oracle/t1: no commits with the Loopgate-Turn trailer"]);
  });

  it("reports a turn that never settled as missing its facts, with no completion to blame", () => {
    const p = turnProblems(turnCounts(goalLog([writeback()]), ["aaa"], T), T);
    expect(p.missing).toHaveLength(4);
    expect(p.unwritten).toEqual([]);
    expect(p.doubled).toEqual([]);
  });
});

describe("goalClean", () => {
  it("is false when any must-be-zero column is off or a kill settled unlike the uninterrupted tick", () => {
    const ok = { ...emptyGoalTally(), kills: 2, settledLike: 2 };
    expect(goalClean(ok)).toBe(true);
    for (const k of ["corrupted", "lost", "blind", "notSettled", "doubled", "unwritten"] as const)
      expect(goalClean({ ...ok, [k]: 1 }), k).toBe(false);
    expect(goalClean({ ...ok, settledLike: 1 })).toBe(false);
  });
});
