import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { GoalEventBody, TodoSpec } from "../../../src/core/events/goal/goal-events.js";
import { terminalClosure } from "../../../src/core/goal/closure.js";
import { scopeWaits } from "../../../src/core/goal/gates.js";
import { decide } from "../../../src/core/goal/goal-decider.js";
import { evolve, foldGoal } from "../../../src/core/goal/goal-state.js";
import type { TodoState } from "../../../src/core/goal/goal-state-shape.js";
import { initialState } from "../../../src/core/goal/goal-state-shape.js";
import { projectStatus, rebuildStatus } from "../../../src/core/goal/projection.js";
import { assess, type RuntimeState } from "../../../src/core/goal/runtime-state.js";
import { closingSteps, POOL, REVS, run, step } from "./goal-commands.arbitrary.js";
import { adv, created, gate, REV0, receipt, spec, visionRecorded } from "./goal-fixtures.js";

// Properties run hundreds of cases; on a shared 2-core machine that can take longer than the default 5 s.
vi.setConfig({ testTimeout: 120_000 });

const NOW = "2026-12-02T00:00:00.000Z";
const RUNS = { numRuns: 300 };

describe("property: no event sequence makes an advancement todo done without a matching validation receipt", () => {
  // Arbitrary events, not only what the decider emits: a forged or corrupt log must not close work either.
  const todoId = fc.constantFrom("todo_aaa", "todo_bbb", "todo_ccc", "todo_ddd");
  const anyEvent: fc.Arbitrary<GoalEventBody | "next_revision"> = fc.oneof(
    fc.constant("next_revision" as const),
    fc
      .record({
        id: todoId,
        ok: fc.boolean(),
        digest: fc.constantFrom("own", "other"),
        rev: fc.integer({ min: 0, max: 3 }),
        n: fc.nat(9),
      })
      .map(
        (r): GoalEventBody => ({
          type: "todo_completed",
          data: {
            todo_id: r.id,
            receipt: receipt(r.digest === "own" ? r.id : "todo_zzz", {
              run_id: `run_${r.n}`,
              status: r.ok ? "SUCCESS" : "ESCALATED",
              goal_revision: REVS[r.rev] as string,
            }),
          },
        }),
      ),
    todoId.map(
      (id): GoalEventBody => ({
        type: "todo_superseded",
        data: { todo_id: id, successor_id: "todo_new", note: "superseded", reason: "" },
      }),
    ),
    todoId.map((id): GoalEventBody => ({ type: "todo_reopened", data: { todo_id: id, note: "" } })),
    todoId.map((id): GoalEventBody => ({ type: "todo_blocked", data: { todo_id: id, reason: "x" } })),
    todoId.map(
      (id): GoalEventBody => ({
        type: "todo_deferred",
        data: { todo_id: id, resume_when: { kind: "at", at: NOW }, note: "" },
      }),
    ),
    todoId.map((id): GoalEventBody => ({ type: "todo_added", data: { todo: adv(id), successor_of: null } })),
    todoId.map(
      (id): GoalEventBody => ({
        type: "gate_decided",
        data: { todo_id: id, decision: "approved", note: "" },
      }),
    ),
  );
  it("holds for every fold", () => {
    fc.assert(
      fc.property(fc.array(anyEvent, { maxLength: 40 }), (raw) => {
        const events: GoalEventBody[] = [
          ...created(spec([adv("todo_aaa"), adv("todo_bbb"), adv("todo_ccc")])),
        ];
        let revisions = 0; // the oracle: revision events are chained rev0000 → rev1 → rev2 …
        const currentAt: string[] = [];
        for (const r of raw) {
          if (r === "next_revision") {
            events.push({
              type: "goal_revision_recorded",
              data: {
                revision: REVS[revisions + 1] ?? "rev9",
                previous: REVS[revisions] ?? "rev9",
                reason: "",
              },
            });
            revisions = Math.min(revisions + 1, REVS.length - 1);
          } else events.push(r);
          currentAt.push(REVS[revisions] as string);
        }
        const state = foldGoal(events);
        const okCompletions = new Set<string>();
        raw.forEach((r, i) => {
          if (r === "next_revision" || r.type !== "todo_completed") return;
          const rc = r.data.receipt;
          if (
            rc.status === "SUCCESS" &&
            rc.task_digest === `sha-${r.data.todo_id}` &&
            rc.goal_revision === (i === 0 ? REV0 : currentAt[i - 1])
          )
            okCompletions.add(`${r.data.todo_id}@${rc.run_id}`);
        });
        for (const t of Object.values(state.todos)) {
          if (t.class !== "advancement_task" || t.status !== "done") continue;
          const byEvidence = t.completion !== null;
          expect(byEvidence || t.note === "superseded" || t.noFollowup !== null).toBe(true);
          if (byEvidence) expect(okCompletions.has(`${t.id}@${t.completion?.runId}`)).toBe(true);
          if (t.note === "superseded") expect(state.todos[t.supersededBy ?? ""]?.successorOf).toBe(t.id);
        }
      }),
      RUNS,
    );
  });
});

describe("property: terminal closure never holds while any frontier item is open", () => {
  it("holds for every accepted command sequence, with and without a health issue", () => {
    let terminals = 0;
    fc.assert(
      fc.property(fc.oneof(fc.array(step, { maxLength: 60 }), closingSteps), fc.boolean(), (steps, sick) => {
        const { events, state } = run(steps);
        const health = sick ? [{ code: "workspace_dirty", detail: "uncommitted files" }] : [];
        const closure = terminalClosure(state, { now: new Date(NOW), health });
        if (!closure.terminal) return;
        terminals++;
        // The oracle, from the events alone.
        const added = events
          .filter((e) => e.type === "todo_added")
          .map((e) => (e.data as { todo: TodoSpec }).todo.id);
        const closed = new Set(
          events
            .filter((e) =>
              ["todo_completed", "todo_superseded", "todo_closed_no_followup", "gate_decided"].includes(
                e.type,
              ),
            )
            .map((e) => (e.data as { todo_id: string }).todo_id),
        );
        expect(added.every((id) => closed.has(id))).toBe(true);
        const revs = events.filter((e) => e.type === "goal_revision_recorded");
        const current = revs.length
          ? (revs[revs.length - 1] as { data: { revision: string } }).data.revision
          : REV0;
        expect(
          events.some(
            (e) =>
              e.type === "acceptance_receipt_recorded" &&
              e.data.receipt.status === "SUCCESS" &&
              e.data.receipt.goal_revision === current,
          ),
        ).toBe(true);
        const lastAdd = events.map((e) => e.type).lastIndexOf("todo_added");
        expect(events.map((e) => e.type).lastIndexOf("goal_no_followup_declared")).toBeGreaterThan(lastAdd);
        const activations = events.filter((e) => e.type === "goal_activation_changed");
        expect(
          activations.length === 0 ||
            (activations[activations.length - 1] as { data: { activation: string } }).data.activation ===
              "active",
        ).toBe(true);
        expect(sick).toBe(false);
        // A route of the goal's agent is on record (followed or retired), read after the last acceptance change.
        const types = events.map((e) => e.type);
        const lastVision = events.findLastIndex(
          (e) => e.type.startsWith("vision_") && (e.data as { agent_id?: string }).agent_id === "agent_main",
        );
        expect(types.indexOf("vision_recorded")).toBeGreaterThanOrEqual(0);
        expect(lastVision).toBeGreaterThan(types.lastIndexOf("goal_acceptance_changed"));
        const windowStart = Date.parse(NOW) - 86_400_000;
        const turns = events.filter(
          (e) =>
            e.type === "quota_spent" &&
            Date.parse(e.data.at) > windowStart &&
            Date.parse(e.data.at) <= Date.parse(NOW),
        ).length;
        expect(turns).toBeLessThan(3);
      }),
      { numRuns: 500 },
    );
    expect(terminals, "some sequences must reach terminal closure").toBeGreaterThan(5);
  });
  it("is reachable (the property above is not vacuous)", () => {
    const s = spec([adv("todo_aaa")]);
    const events = [
      ...created(s),
      { type: "todo_completed", data: { todo_id: "todo_aaa", receipt: receipt("todo_aaa") } },
      {
        type: "acceptance_receipt_recorded",
        data: { acceptance_id: "acc_all", receipt: receipt("acceptance") },
      },
      { type: "goal_no_followup_declared", data: { rationale: "done" } },
    ] as GoalEventBody[];
    // Without the agent's route on record (a vision checkpoint) it is not closed.
    expect(
      terminalClosure(foldGoal(events), { now: new Date(NOW), health: [] }).gaps.map((g) => g.kind),
    ).toEqual(["vision"]);
    expect(
      terminalClosure(foldGoal([...events, visionRecorded()]), { now: new Date(NOW), health: [] }),
    ).toEqual({ terminal: true, gaps: [], outcome: "achieved" });
  });
});

describe("property: an approval never unblocks an action outside its scope", () => {
  const SCOPES = ["s_one", "s_two", "s_three"];
  it("approving scope S changes the decision waits only of todos that require S", () => {
    fc.assert(
      fc.property(
        fc.array(fc.subarray(SCOPES), { minLength: 1, maxLength: 5 }),
        fc.array(fc.constantFrom(...SCOPES), { maxLength: 4 }),
        (needs, approvals) => {
          const todos: TodoSpec[] = [
            ...SCOPES.map((s) => gate(`todo_gate_${s}`, s)),
            ...needs.map((req, i) => adv(`todo_work${i}`, { required_decision_scopes: req })),
          ];
          let state = foldGoal(created(spec(todos)));
          const approvedScopes = new Set<string>();
          for (const s of approvals) {
            const before = needs.map((_, i) =>
              scopeWaits(state, state.todos[`todo_work${i}`] as TodoState).map((w) => w.scope),
            );
            let out: GoalEventBody[] = [];
            try {
              out = decide({ type: "decide_gate", todoId: `todo_gate_${s}`, decision: "approve" }, state);
            } catch {
              continue; // already approved
            }
            state = out.reduce(evolve, state);
            approvedScopes.add(s);
            needs.forEach((req, i) => {
              const after = scopeWaits(state, state.todos[`todo_work${i}`] as TodoState).map((w) => w.scope);
              if (!req.includes(s)) expect(after).toEqual(before[i]);
              else expect(after).toEqual((before[i] ?? []).filter((x) => x !== s));
            });
          }
          // And completion with a matching receipt is accepted exactly when every required scope was approved.
          needs.forEach((req, i) => {
            const id = `todo_work${i}`;
            const ok = req.every((s) => approvedScopes.has(s));
            let accepted = true;
            try {
              decide({ type: "complete_todo", todoId: id, receipt: receipt(id) }, state);
            } catch {
              accepted = false;
            }
            expect(accepted).toBe(ok);
          });
        },
      ),
      RUNS,
    );
  });
});

describe("property: the runtime state is the seed's precedence applied to the facts", () => {
  const PRECEDENCE: RuntimeState[] = [
    "blocked_health",
    "operator_gate",
    "focus_wait",
    "eligible",
    "waiting",
    "throttled",
    "paused",
  ];
  it("holds for every combination of health, activation, gates, free work, deferrals, budget and obligations", () => {
    fc.assert(
      fc.property(
        fc.record({
          sick: fc.boolean(),
          stopped: fc.boolean(),
          gated: fc.boolean(),
          free: fc.boolean(),
          deferred: fc.boolean(),
          spent: fc.boolean(),
          stale: fc.boolean(),
        }),
        (p) => {
          const todos: TodoSpec[] = [];
          if (p.free) todos.push(adv("todo_free"));
          if (p.gated)
            todos.push(gate("todo_gate", "pub"), adv("todo_gated", { required_decision_scopes: ["pub"] }));
          if (p.deferred) todos.push(adv("todo_later"));
          const events: GoalEventBody[] = [
            ...created(spec(todos, { budget: { window_seconds: 86_400, turns_per_window: 2 } })),
          ];
          if (p.deferred)
            events.push({
              type: "todo_deferred",
              data: {
                todo_id: "todo_later",
                resume_when: { kind: "at", at: "2027-01-01T00:00:00.000Z" },
                note: "",
              },
            });
          if (p.spent)
            for (const n of [1, 2])
              events.push({
                type: "quota_spent",
                data: {
                  turn_id: `turn_${n}`,
                  at: "2026-12-01T20:00:00.000Z",
                  turns: 1,
                  tokens: 1,
                  cost_usd: 0,
                },
              });
          if (p.stale) {
            events.push({
              type: "vision_recorded",
              data: {
                agent_id: "agent_main",
                route: "r",
                checkpoint: { goal_revision: REV0, acceptance_version: 0 },
              },
            });
            events.push({
              type: "goal_acceptance_changed",
              data: { acceptance: spec().acceptance, reason: "new path" },
            });
          }
          if (p.stopped)
            events.push({ type: "goal_activation_changed", data: { activation: "stopped", note: "" } });
          const health = p.sick ? [{ code: "task_missing", detail: "tasks/x.yaml is gone" }] : [];
          // The rule, written independently of the code under test.
          const active = !p.stopped;
          const work = p.free || (!p.gated && !p.deferred); // no advancement left: acceptance must be proved
          const budgetOk = !p.spent;
          const pending = p.deferred || p.gated;
          const holds: Record<RuntimeState, boolean> = {
            blocked_health: p.sick,
            operator_gate: active && p.gated && !work,
            focus_wait: active && p.stale,
            eligible: active && work && budgetOk,
            waiting: active && !work && (pending || budgetOk),
            throttled: active && !budgetOk,
            paused: !active,
          };
          const expected = PRECEDENCE.find((s) => holds[s]);
          expect(assess(foldGoal(events), { now: new Date(NOW), health }).runtimeState).toBe(expected);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("property: a status projection rebuilt from scratch equals the incremental one", () => {
  it("holds after every append", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.boolean(), (steps, sick) => {
        const { batches } = run(steps);
        const ctx = {
          now: new Date(NOW),
          health: sick ? [{ code: "sandbox_selftest_failed", detail: "bwrap" }] : [],
        };
        let incremental = initialState();
        const seen: GoalEventBody[] = [];
        for (const b of batches) {
          incremental = b.reduce(evolve, incremental);
          seen.push(...b);
          expect(projectStatus(incremental, ctx)).toEqual(rebuildStatus(seen, ctx));
        }
        // The incremental state was never mutated behind the fold's back: JSON round trip is identical.
        expect(JSON.parse(JSON.stringify(projectStatus(incremental, ctx)))).toEqual(rebuildStatus(seen, ctx));
      }),
      { numRuns: 80 },
    );
  });
});

describe("the command runner of the properties reaches deep states", () => {
  it("some sequences complete todos, decide gates and supersede", () => {
    const { state } = run([
      { type: "complete_todo", todoId: "todo_aaa", receipt: { ...receipt(""), run_id: "run_x" } },
      { type: "decide_gate", todoId: "todo_gate", decision: "approve" },
      { type: "supersede_todo", todoId: "todo_usr", successor: adv("todo_succ1") },
    ]);
    expect(state.todos.todo_aaa?.status).toBe("done");
    expect(state.todos.todo_gate?.decision).toBe("approved");
    expect(state.todos.todo_usr?.supersededBy).toBe("todo_succ1");
    expect(POOL).toContain("todo_blk");
  });
});
