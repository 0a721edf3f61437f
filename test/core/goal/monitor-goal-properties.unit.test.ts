import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { GoalEventBody, TodoSpec } from "../../../src/core/events/goal/goal-events.js";
import { type GoalCommand, goalDecider } from "../../../src/core/goal/goal-decider.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import { monitorPollCommand } from "../../../src/core/goal/monitor-goal.js";
import { adv, created, spec } from "./goal-fixtures.js";

// Property: a monitor never creates two successors for one generation, whatever the polls
// (hashes repeating, time not advancing, retries of an operation id with other content, stale or
// skipped generations, reused successor ids).

const W = "todo_watch";
const T0 = Date.parse("2026-12-01T10:00:00.000Z");
const start = created(
  spec([
    adv("todo_main"),
    {
      id: W,
      content: "watch",
      class: "continuous_monitor",
      monitor: { argv: ["true"], cadence_seconds: 60, timeout_seconds: 5, max_no_change_before_replan: 50 },
    },
  ]),
);

const step = fc.record({
  hash: fc.constantFrom("h1", "h2", "h3"),
  minutes: fc.integer({ min: 0, max: 3 }),
  /** Reuse an earlier operation id (a retry, possibly with other content) instead of a new one. */
  retry: fc.option(fc.nat(), { nil: undefined }),
  /** Name a generation other than the one monitorPollCommand computes (stale, skipped). */
  generationShift: fc.constantFrom(0, 0, 0, -1, 1),
  /** Reuse a successor id. */
  successorId: fc.constantFrom("todo_s_a", "todo_s_b", null),
  fail: fc.boolean(),
});

describe("monitor properties", () => {
  it("a monitor never creates two successors for one generation; every change's successor is one real todo", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        let events: GoalEventBody[] = [...start];
        let now = T0;
        const ops: string[] = [];
        steps.forEach((s, i) => {
          now += s.minutes * 60_000;
          const at = new Date(now).toISOString();
          const st = foldGoal(events);
          const opId = s.retry !== undefined && ops.length ? (ops[s.retry % ops.length] as string) : `op${i}`;
          ops.push(opId);
          const poll = s.fail
            ? ({ ok: false, failure: "exit_nonzero", exit_code: 1, detail: "x" } as const)
            : ({ ok: true, result_hash: s.hash } as const);
          let cmd: GoalCommand = monitorPollCommand(st, W, opId, new Date(at), poll);
          if (cmd.type === "record_monitor_poll" && cmd.generation !== undefined) {
            const succ: TodoSpec | undefined = s.successorId
              ? { id: s.successorId, content: "react", class: "user_action" }
              : cmd.successor;
            cmd = {
              ...cmd,
              generation: cmd.generation + s.generationShift,
              ...(succ ? { successor: succ } : {}),
            };
          }
          try {
            const decided = goalDecider.decide(cmd, st);
            if (ops.indexOf(opId) < i && st.monitors[W]?.operations[opId]) expect(decided).toEqual([]);
            events = [...events, ...decided];
          } catch {
            /* refused: nothing appended */
          }
        });
        const st = foldGoal(events);
        expect(st.anomalies).toEqual([]);
        const created = events.filter((e) => e.type === "monitor_successor_created");
        const gens = created.map((e) => (e.type === "monitor_successor_created" ? e.data.generation : -1));
        expect(new Set(gens).size).toBe(gens.length);
        const added = events.filter((e) => e.type === "todo_added" && e.data.successor_of === W);
        expect(added.length).toBe(created.length);
        const m = st.monitors[W];
        expect(Object.keys(m?.successors ?? {}).length).toBe(m?.materialChangeGeneration);
        expect(gens).toEqual(gens.map((_, k) => k + 1));
      }),
      { numRuns: 300 },
    );
  });
});
