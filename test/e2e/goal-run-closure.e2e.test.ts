// The goal example driven to terminal closure by `loopgate goal run`: the fixes one
// governed turn each, acceptance proved in a turn of its own, the stop at the user gate (exit 1, who must
// act), the approval, a person's own step, the closure intent, and exit 0 with every frontier item proved.
// Asserted from the store and the goal workspace's git log: the turn facts in order per turn, one commit per
// accepted code writeback with its Loopgate-Turn trailer, and the budget spent = what the turns charged.
// The monitor's first poll (its baseline) is the fifth turn, while the goal waits on the person. A
// monitor's material change and a replan turn inside goal run: goal-run-done-when.e2e.test.ts.
import { afterAll, describe, expect, it } from "vitest";
import { removeTemps, show } from "./cli.js";
import {
  ACCEPTANCE,
  commits,
  FIXES,
  GOAL,
  goalEvents,
  head,
  identity,
  jsonLines,
  lg,
  newGoal,
  SETTLED,
  status,
} from "./goal-support.js";

afterAll(removeTemps);

describe("goal run drives the example goal to terminal closure", () => {
  it("fixes, acceptance turn, user gate (exit 1), approval, closure intent, terminal (exit 0)", async () => {
    const store = await newGoal();

    // 1. The fixes, one governed turn each, then the acceptance turn; it stops at the user gate.
    const first = await lg(store, "goal", "run", GOAL, "--json");
    expect(first.code, show(first)).toBe(1);
    // Five turns and the tick after them that says who must act.
    expect(jsonLines(first.stdout).at(-1)).toMatchObject({ exit_code: 1, stop: "waiting_person", turns: 6 });
    const gated = await lg(store, "goal", "run", GOAL);
    expect(gated.code, show(gated)).toBe(1);
    expect(gated.stdout).toMatch(/who must act: a person deciding publish/);
    expect(gated.stdout).toMatch(new RegExp(`gate approve ${GOAL} todo_publish_gate`));

    // 2. The approval; what is left is a person's own step (tag and publish), then the monitor's stop.
    expect((await lg(store, "gate", "approve", GOAL, "todo_publish_gate", "--note", "ship it")).code).toBe(0);
    const person = await lg(store, "goal", "run", GOAL, "--json");
    expect(person.code, show(person)).toBe(1);
    expect(jsonLines(person.stdout).at(-1)).toMatchObject({ stop: "waiting_person" });
    const published = await lg(
      store,
      "todo",
      "close-no-followup",
      GOAL,
      "todo_publish",
      "--rationale",
      "tagged v1",
    );
    expect(published.code, show(published)).toBe(0);
    const watched = await lg(
      store,
      ...["todo", "close-no-followup", GOAL, "todo_watch_reports", "--rationale", "reports are closed"],
    );
    expect(watched.code, show(watched)).toBe(0);

    // 3. Closure needs a no_followup intent; with it, goal run reports terminal closure and exits 0.
    const before = await lg(store, "goal", "run", GOAL, "--json");
    expect(before.code, show(before)).not.toBe(0);
    expect((await lg(store, "goal", "close", GOAL, "--rationale", "all three fixes proved")).code).toBe(0);
    // Closure reads the agent's route too (a vision checkpoint): the example's goal file declares none.
    const route = [
      "goal",
      "vision",
      "record",
      GOAL,
      "--route",
      "quoted fields, CRLF, unknown columns, publish",
    ];
    expect((await lg(store, ...route)).code).toBe(0);
    const done = await lg(store, "goal", "run", GOAL, "--json");
    expect(done.code, show(done)).toBe(0);
    expect(jsonLines(done.stdout).at(-1)).toMatchObject({ exit_code: 0, stop: "terminal" });

    // Every frontier item proved: the fixes done on evidence, acceptance SUCCESS on the final revision.
    const s = await status(store);
    for (const id of FIXES) expect(s.todos.find((t) => t.id === id)?.status, id).toBe("done");
    expect(s.revision).toBe(head(store));
    const events = await goalEvents(store);
    const receipts = events.filter((e) => e.type === "acceptance_receipt_recorded");
    expect(receipts.map((e) => e.data.acceptance_id)).toEqual(ACCEPTANCE);
    for (const r of receipts)
      expect(r.data.receipt).toMatchObject({ status: "SUCCESS", goal_revision: s.revision });

    // The event sequence, per turn: five turns (t1..t5), each settled through every phase exactly once.
    const turns = [...new Set(events.flatMap((e) => (identity(e) ? [identity(e)?.turn_instance_id] : [])))];
    expect(turns).toEqual(["t1", "t2", "t3", "t4", "t5"]);
    for (const t of turns)
      expect(
        events.filter((e) => identity(e)?.turn_instance_id === t).map((e) => e.type),
        t,
      ).toEqual(SETTLED);
    const work = events
      .filter((e) => e.type === "turn_bound")
      .map((e) => e.data.work as { kind: string; todo_id?: string; acceptance_ids?: string[] });
    expect(work).toEqual([
      ...FIXES.map((todo_id) => ({ kind: "todo", todo_id })),
      { kind: "acceptance", acceptance_ids: ACCEPTANCE },
      { kind: "todo", todo_id: "todo_watch_reports" },
    ]);
    // The order of the goal facts around the turns: each fix's completion, the acceptance receipts, the
    // monitor's baseline (its poll script, beside the goal file, ran), then the person's decision.
    const milestones = events
      .map((e) => e.type)
      .filter((t) =>
        [
          "todo_completed",
          "acceptance_receipt_recorded",
          "gate_decided",
          "monitor_baseline_recorded",
          "monitor_poll_failed",
        ].includes(t),
      );
    expect(milestones.slice(0, 8)).toEqual([
      ...FIXES.map(() => "todo_completed"),
      ...ACCEPTANCE.map(() => "acceptance_receipt_recorded"),
      "monitor_baseline_recorded",
      "gate_decided",
    ]);

    // The commits: one per accepted code writeback (the fixes; acceptance commits nothing), each with the
    // turn's identity as its Loopgate-Turn trailer and naming its todo.
    const log = commits(store);
    expect(log.map((c) => c.trailer)).toEqual(["t1", "t2", "t3"].map((t) => `${GOAL}/oracle/${t}`));
    for (const [i, c] of log.entries()) expect(c.subject).toContain(FIXES[i]);

    // The budget: the spend facts sum to what the turns charged (one turn each, oracle and gates: no tokens).
    const charged = events
      .filter((e) => e.type === "turn_quota_spent")
      .map((e) => e.data.usage as { turns: number; tokens: number; cost_usd: number });
    const spent = events
      .filter((e) => e.type === "quota_spent")
      .map((e) => e.data as { turns: number; tokens: number; cost_usd: number });
    const sum = (xs: { turns: number; tokens: number; cost_usd: number }[]) =>
      xs.reduce(
        (a, x) => ({
          turns: a.turns + x.turns,
          tokens: a.tokens + x.tokens,
          cost_usd: a.cost_usd + x.cost_usd,
        }),
        {
          turns: 0,
          tokens: 0,
          cost_usd: 0,
        },
      );
    expect(charged).toHaveLength(5);
    expect(sum(spent)).toEqual(sum(charged));
    expect(sum(spent)).toEqual({ turns: 5, tokens: 0, cost_usd: 0 });
  }, 300_000);
});
