import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/cli/output/context.js";
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import { goalState } from "../../src/runner/goal/goal-engine.js";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { loopgate, parseStdout, ROOT, removeTemps, show } from "./cli.js";
import { GOAL, head, holdLease, newGoal, todoStatus } from "./goal-support.js";

// `goal tick`: one turn per call, the lease (busy, takeover), and the typed failures that give work back.
afterAll(removeTemps);

type Outcome = { kind: string; code?: string; detail?: string; holder?: string; expires_at?: string };
const tick = (store: string, ...extra: string[]) =>
  loopgate(["goal", "tick", GOAL, "--store", store, "--json", ...extra]);

async function events(store: string): Promise<RecordedEvent[]> {
  const s = await openStore(store, "read");
  try {
    return await s.readStream(goalStream(GOAL));
  } finally {
    await s.close();
  }
}

const ws = (store: string) => join(store, "goals", GOAL, "workspace");
const trailerCommits = (store: string) =>
  execFileSync("git", ["log", "--format=%(trailers:key=Loopgate-Turn,valueonly)"], {
    cwd: ws(store),
    encoding: "utf8",
  })
    .split("\n")
    .filter((l) => l.trim() !== "");

describe("goal tick", () => {
  it("advances one todo per call: the turn's phases, one commit, the todo done, the next wake-up", async () => {
    const store = await newGoal();
    const before = head(store);
    const r = await loopgate(["goal", "tick", GOAL, "--store", store]);
    expect(r.code, show(r)).toBe(0);
    for (const phase of [
      "bind",
      "host_execute",
      "typed_result",
      "validation",
      "durable_writeback",
      "quota_spend",
      "scheduler_apply",
      "scheduler_ack",
    ])
      expect(r.stdout).toMatch(new RegExp(`turn 1 · todo_quoted_fields · ${phase}: `));
    expect(r.stdout).toMatch(/advanced: todo_quoted_fields done/);
    expect(r.stdout).toMatch(/next wake-up: run_now/);
    expect(await todoStatus(store, "todo_quoted_fields")).toBe("done");
    expect(await todoStatus(store, "todo_crlf")).toBe("open");
    expect(execFileSync("git", ["rev-parse", "HEAD^"], { cwd: ws(store), encoding: "utf8" }).trim()).toBe(
      before,
    );
    expect(trailerCommits(store)).toEqual([`${GOAL}/oracle/t1`]);
    const s = goalState(await events(store));
    expect(s.spends.map((x) => x.turnId)).toEqual([`${GOAL}/oracle/t1`]);
    expect(s.lease).toBeNull();
  });

  it("a goal whose lease another live turn holds answers busy (exit 1) and changes nothing", async () => {
    const store = await newGoal();
    await holdLease(store, "2999-01-01T00:00:00.000Z");
    const n = (await events(store)).length;
    const r = await tick(store);
    expect(r.code, show(r)).toBe(1);
    const o = parseStdout<Outcome>(r);
    expect(o).toMatchObject({ kind: "busy", holder: "someone-else", expires_at: "2999-01-01T00:00:00.000Z" });
    const text = await loopgate(["goal", "tick", GOAL, "--store", store]);
    expect(text.stdout).toMatch(/busy: turn in progress by someone-else until 2999-01-01T00:00:00.000Z/);
    expect((await events(store)).length).toBe(n);
    expect(await todoStatus(store, "todo_quoted_fields")).toBe("open");
  });

  it("an expired lease is taken over, and the turn runs", async () => {
    const store = await newGoal();
    await holdLease(store, "2000-01-01T00:00:00.000Z");
    const r = await tick(store);
    expect(r.code, show(r)).toBe(0);
    const taken = (await events(store)).filter((e) => e.type === "turn_lease_acquired").at(-1);
    expect((taken?.data as { previous: { reason: string } | null } | undefined)?.previous?.reason).toBe(
      "expired",
    );
  });

  it("a run that is not SUCCESS is receipt_missing: no writeback, no spend, the todo stays open (exit 2)", async () => {
    const store = await newGoal();
    const before = head(store);
    const r = await tick(store, "--noop", "--max-attempts", "1");
    expect(r.code, show(r)).toBe(2);
    expect(parseStdout<Outcome>(r)).toMatchObject({ kind: "failed", code: "receipt_missing" });
    expect(head(store)).toBe(before);
    expect(trailerCommits(store)).toEqual([]);
    const s = goalState(await events(store));
    expect(s.spends).toEqual([]);
    expect(s.todos.todo_quoted_fields?.status).toBe("open");
    expect(s.turns[`${GOAL}/oracle/t1`]?.released).toMatch(/receipt_missing/);
  });

  it("a revision moved during the turn is needs_rebase: nothing forced, the todo given back (exit 2)", async () => {
    const store = await newGoal();
    const solution = join(ROOT, "examples", "sh-csvcol", "solution.sh");
    // The builder does the work and, behind loopgate's back, commits to the goal workspace.
    const builder = `sh -c 'sh ${solution} && git -C ${ws(store)} -c user.name=x -c user.email=x@x commit -q --allow-empty -m moved'`;
    const r = await tick(store, "--builder", builder, "--unsafe-no-sandbox");
    expect(r.code, show(r)).toBe(2);
    expect(parseStdout<Outcome>(r)).toMatchObject({ kind: "failed", code: "needs_rebase" });
    const log = execFileSync("git", ["log", "--format=%s"], { cwd: ws(store), encoding: "utf8" });
    expect(log.split("\n")[0]).toBe("moved");
    expect(trailerCommits(store)).toEqual([]);
    const s = goalState(await events(store));
    expect(s.todos.todo_quoted_fields?.status).toBe("open");
    expect(s.spends).toEqual([]);
  });

  it("an ambiguous writeback readback (two commits with the turn's trailer) fails closed as blocked_health", async () => {
    const store = await newGoal();
    // Stop the turn right after its writeback was journaled as prepared (the 7th append of the tick).
    const k = await loopgate(["goal", "tick", GOAL, "--store", store], {
      env: { LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS: String((await events(store)).length + 7) },
    });
    expect(k.signal, show(k)).toBe("SIGKILL");
    const prepared = (await events(store)).at(-1);
    expect(prepared?.type).toBe("turn_effect_prepared");
    for (const m of ["one", "two"])
      execFileSync(
        "git",
        [
          "-c",
          "user.name=x",
          "-c",
          "user.email=x@x",
          "commit",
          "-q",
          "--allow-empty",
          "-m",
          m,
          "-m",
          `Loopgate-Turn: ${GOAL}/oracle/t1`,
        ],
        { cwd: ws(store) },
      );
    const r = await tick(store);
    expect(r.code, show(r)).toBe(2);
    const o = parseStdout<Outcome>(r);
    expect(o).toMatchObject({ kind: "failed", code: "blocked_health" });
    expect(o.detail).toMatch(/2 commits carry Loopgate-Turn/);
    const s = goalState(await events(store));
    expect(s.todos.todo_quoted_fields?.status).toBe("open");
    expect(s.spends).toEqual([]);
    // It stays closed: the next tick looks again, says the same and records nothing new.
    const facts = async () => (await events(store)).filter((e) => !e.type.startsWith("turn_lease"));
    const before = (await facts()).length;
    const again = await tick(store);
    expect(again.code, show(again)).toBe(2);
    expect(parseStdout<Outcome>(again)).toMatchObject({ kind: "failed", code: "blocked_health" });
    expect((await facts()).length).toBe(before);
    // Repaired (the forged commits removed by hand), the next tick's readback finds none (absent),
    // writes the change back once and settles the turn: repair, verify, recompute.
    const base = goalState(await events(store)).turns[`${GOAL}/oracle/t1`]?.baseRevision ?? "";
    execFileSync("git", ["reset", "-q", "--hard", base], { cwd: ws(store) });
    const repaired = await tick(store);
    expect(repaired.code, show(repaired)).toBe(0);
    const done = goalState(await events(store));
    expect(done.todos.todo_quoted_fields?.status).toBe("done");
    expect(done.spends).toHaveLength(1);
    expect(trailerCommits(store)).toEqual([`${GOAL}/oracle/t1`]);
  });
});
