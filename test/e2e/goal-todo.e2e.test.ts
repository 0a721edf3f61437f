// loopgate todo run / done / add / block / defer / reopen / supersede / close-no-followup and gate …:
// each allowed transition and each refusal, on the bundled goal example.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loopgate, parseStdout, removeTemps, show } from "./cli.js";
import { GOAL, GOAL_DIR, lg, newGoal, refused, runIdOf, status, todoStatus } from "./goal-support.js";

afterAll(removeTemps);

describe.concurrent("todo run and todo done: done only on evidence", () => {
  it("a run records its goal and revision; its SUCCESS completes the todo only once its change is persisted", async () => {
    const store = await newGoal();
    const run = await lg(store, "todo", "run", GOAL, "todo_quoted_fields", "--json");
    expect(run.code, show(run)).toBe(0);
    const runId = runIdOf(run);
    // The run recorded the goal and the revision it started from.
    const ev = await loopgate(["events", runId, "--store", store, "--json"]);
    const started = JSON.parse(ev.stdout.split("\n")[0] ?? "{}") as {
      data: { goal?: { id: string; revision: string } };
    };
    expect(started.data.goal).toEqual({ id: GOAL, revision: (await status(store)).revision });
    // todo run writes nothing back: the change its gates saw is not in the goal workspace, so it is not
    // the todo's evidence (goal-effect.e2e.test.ts: the governed turn that persists it, and a run that
    // changed nothing completing a todo).
    await refused(
      store,
      await lg(store, "todo", "done", GOAL, "todo_quoted_fields", "--evidence", runId),
      /rule durable_writeback_before_done: run .* changed 1 path\(s\) \(bin\/csvcol\)/,
    );
    expect(await todoStatus(store, "todo_quoted_fields")).toBe("open");
  }, 300_000);

  it("refuses an ESCALATED run, another todo's run, a run outside the goal, an unknown run, and no evidence at all", async () => {
    const store = await newGoal();
    const noop = await lg(store, "todo", "run", GOAL, "todo_crlf", "--noop", "--json");
    expect(noop.code, show(noop)).toBe(1);
    await refused(
      store,
      await lg(store, "todo", "done", GOAL, "todo_crlf", "--evidence", runIdOf(noop)),
      /rule done_needs_receipt: run .* ended ESCALATED, and only a SUCCESS is a validation receipt/,
    );
    const other = await lg(store, "todo", "run", GOAL, "todo_unknown_column", "--json");
    expect(other.code, show(other)).toBe(0);
    await refused(
      store,
      await lg(store, "todo", "done", GOAL, "todo_crlf", "--evidence", runIdOf(other)),
      /rule receipt_matches_task: .*csvcol-unknown-column.*not todo_crlf's task csvcol-crlf/,
    );
    // An ordinary run of the same task file, not on the goal workspace.
    const plain = await loopgate([
      "run",
      join(GOAL_DIR, "tasks", "crlf", "task.yaml"),
      "--oracle",
      "--json",
      "--store",
      store,
    ]);
    expect(plain.code, show(plain)).toBe(0);
    await refused(
      store,
      await lg(store, "todo", "done", GOAL, "todo_crlf", "--evidence", runIdOf(plain)),
      /did not run on a goal workspace/,
    );
    const unknown = await lg(
      store,
      "todo",
      "done",
      GOAL,
      "todo_crlf",
      "--evidence",
      "20260101-000000-abcdef",
    );
    expect(unknown.code, show(unknown)).toBe(2);
    expect(unknown.stderr).toMatch(/no run 20260101-000000-abcdef/);
    const none = await lg(store, "todo", "done", GOAL, "todo_crlf");
    expect(none.code, show(none)).toBe(2);
    expect(none.stderr).toMatch(/needs --evidence RUN/);
    expect(await todoStatus(store, "todo_crlf")).toBe("open");
  }, 400_000);

  it("refuses to run a todo that has no task or is not open", async () => {
    const store = await newGoal();
    await refused(
      store,
      await lg(store, "todo", "run", GOAL, "todo_publish_gate", "--noop"),
      /only an advancement_task has a task to run/,
    );
    await refused(
      store,
      await lg(store, "todo", "run", GOAL, "todo_nope", "--noop"),
      /has no todo todo_nope/,
    );
    expect((await lg(store, "todo", "block", GOAL, "todo_crlf", "--reason", "waiting")).code).toBe(0);
    await refused(
      store,
      await lg(store, "todo", "run", GOAL, "todo_crlf", "--noop"),
      /todo_crlf is blocked: only an open todo is run/,
    );
  });

  it("refuses to run a todo of a stopped goal, and runs nothing", async () => {
    const store = await newGoal();
    expect((await lg(store, "goal", "stop", GOAL)).code).toBe(0);
    await refused(
      store,
      await lg(store, "todo", "run", GOAL, "todo_crlf", "--noop"),
      /goal .* is stopped \(runtime state paused\): a stopped goal runs no work; resume it first/,
    );
    expect((await lg(store, "runs", "--json")).stdout.trim()).toBe("[]");
  });
});

describe.concurrent("todo lifecycle commands", () => {
  it("block needs a reason; blocked → open only by reopen", async () => {
    const store = await newGoal();
    const bare = await lg(store, "todo", "block", GOAL, "todo_crlf");
    expect(bare.code, show(bare)).toBe(2);
    expect(bare.stderr).toMatch(/needs --reason TEXT/);
    expect((await lg(store, "todo", "block", GOAL, "todo_crlf", "--reason", "upstream bug")).code).toBe(0);
    expect(await todoStatus(store, "todo_crlf")).toBe("blocked");
    expect((await lg(store, "todo", "reopen", GOAL, "todo_crlf")).code).toBe(0);
    expect(await todoStatus(store, "todo_crlf")).toBe("open");
  });

  it("defer needs a machine-checkable --until; a deferred todo stays deferred when it holds, until reopened", async () => {
    const store = await newGoal();
    const bare = await lg(store, "todo", "defer", GOAL, "todo_crlf");
    expect(bare.code, show(bare)).toBe(2);
    expect(bare.stderr).toMatch(/needs --until COND/);
    const vague = await lg(store, "todo", "defer", GOAL, "todo_crlf", "--until", "later");
    expect(vague.code, show(vague)).toBe(2);
    expect(vague.stderr).toMatch(/--until: .*not a machine-readable resume condition/);
    // A time already past: the condition holds, yet the status stays deferred (a resume candidate).
    const d = await lg(store, "todo", "defer", GOAL, "todo_crlf", "--until", "at:2020-01-01T00:00:00Z");
    expect(d.code, show(d)).toBe(0);
    expect(await todoStatus(store, "todo_crlf")).toBe("deferred");
    const text = await lg(store, "goal", "status", GOAL);
    expect(text.stdout).toMatch(/◷! todo_crlf .*may resume \(reopen it\)/);
    await refused(
      store,
      await lg(store, "todo", "run", GOAL, "todo_crlf", "--noop"),
      /todo_crlf is deferred: only an open todo is run/,
    );
    expect((await lg(store, "todo", "reopen", GOAL, "todo_crlf", "--note", "back")).code).toBe(0);
    expect(await todoStatus(store, "todo_crlf")).toBe("open");
  });

  it("reopen refuses an open todo", async () => {
    const store = await newGoal();
    await refused(store, await lg(store, "todo", "reopen", GOAL, "todo_crlf"), /todo_crlf/);
  });

  it("supersede marks the predecessor done (note superseded) and adds the linked successor in one write", async () => {
    const store = await newGoal();
    const before = (await status(store)).streamRevision;
    const r = await lg(
      store,
      "todo",
      "supersede",
      GOAL,
      "todo_unknown_column",
      "todo_unknown_column_v2",
      "--class",
      "advancement_task",
      "--task",
      join(GOAL_DIR, "tasks", "unknown-column", "task.yaml"),
      "--content",
      "Exit 2 for bad columns (re-scoped)",
      "--json",
    );
    expect(r.code, show(r)).toBe(0);
    const out = parseStdout<{ stream_revision: number; events: string[] }>(r);
    expect(out.events.sort()).toEqual(["todo_added", "todo_superseded"]);
    expect(out.stream_revision).toBe(before + 2);
    const s = await status(store);
    const old = s.todos.find((t) => t.id === "todo_unknown_column");
    const neu = s.todos.find((t) => t.id === "todo_unknown_column_v2");
    expect(old).toMatchObject({ status: "done", supersededBy: "todo_unknown_column_v2" });
    expect(neu).toMatchObject({ status: "open", successorOf: "todo_unknown_column" });
    const text = await lg(store, "goal", "status", GOAL);
    expect(text.stdout).toMatch(
      /todo_unknown_column .*superseded by todo_unknown_column_v2[^\n]*\n\s+○ +todo_unknown_column_v2/,
    );
  });

  it("close-no-followup needs a rationale and records it", async () => {
    const store = await newGoal();
    const bare = await lg(store, "todo", "close-no-followup", GOAL, "todo_publish");
    expect(bare.code, show(bare)).toBe(2);
    expect(bare.stderr).toMatch(/needs --rationale TEXT/);
    const r = await lg(
      store,
      "todo",
      "close-no-followup",
      GOAL,
      "todo_publish",
      "--rationale",
      "released by hand",
    );
    expect(r.code, show(r)).toBe(0);
    expect((await status(store)).todos.find((t) => t.id === "todo_publish")?.noFollowup).toBe(
      "released by hand",
    );
  });

  it("add checks its flags, and the goal refuses a duplicate id", async () => {
    const store = await newGoal();
    const bad = [
      [["todo_docs", "--class", "user_action"], /needs --content/],
      [["docs", "--class", "user_action", "--content", "x"], /not a todo id/],
      [["todo_docs", "--class", "running", "--content", "x"], /"running" is not a class/],
      [
        ["todo_docs", "--class", "advancement_task", "--content", "x"],
        /an advancement_task needs --task FILE/,
      ],
      [["todo_docs", "--class", "user_gate", "--content", "x"], /a user_gate needs --scope SCOPE/],
    ] as const;
    for (const [args, message] of bad) {
      const r = await lg(store, "todo", "add", GOAL, ...args);
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const ok = await lg(
      store,
      "todo",
      "add",
      GOAL,
      "todo_docs",
      "--class",
      "user_action",
      "--content",
      "Write the docs",
    );
    expect(ok.code, show(ok)).toBe(0);
    expect(await todoStatus(store, "todo_docs")).toBe("open");
    await refused(
      store,
      await lg(store, "todo", "add", GOAL, "todo_docs", "--class", "user_action", "--content", "again"),
      /todo_docs/,
    );
  });

  it("a stale --expect-revision is needs_rebase with the current revision (exit 3), and nothing is written", async () => {
    const store = await newGoal();
    const rev = (await status(store)).streamRevision;
    const r = await lg(
      store,
      "todo",
      "block",
      GOAL,
      "todo_crlf",
      "--reason",
      "x",
      "--expect-revision",
      String(rev - 1),
    );
    expect(r.code, show(r)).toBe(3);
    expect(r.stderr).toContain(`needs_rebase: goal ${GOAL} is at revision ${rev}, not ${rev - 1}`);
    expect(await todoStatus(store, "todo_crlf")).toBe("open");
    const j = await lg(
      store,
      "gate",
      "approve",
      GOAL,
      "todo_publish_gate",
      "--expect-revision",
      "0",
      "--json",
    );
    expect(j.code, show(j)).toBe(3);
    expect(parseStdout(j)).toMatchObject({ error: "needs_rebase", current_revision: rev });
    const ok = await lg(
      store,
      "todo",
      "block",
      GOAL,
      "todo_crlf",
      "--reason",
      "x",
      "--expect-revision",
      String(rev),
    );
    expect(ok.code, show(ok)).toBe(0);
  });
});

describe.concurrent("gate commands", () => {
  it("approve records the decision on a user gate, once", async () => {
    const store = await newGoal();
    const r = await lg(store, "gate", "approve", GOAL, "todo_publish_gate", "--note", "ship it");
    expect(r.code, show(r)).toBe(0);
    expect((await status(store)).todos.find((t) => t.id === "todo_publish_gate")?.gateDecision).toBe(
      "approved",
    );
    await refused(store, await lg(store, "gate", "approve", GOAL, "todo_publish_gate"), /todo_publish_gate/);
  });

  it("refuses a decision on a todo that is not a user gate", async () => {
    const store = await newGoal();
    await refused(store, await lg(store, "gate", "approve", GOAL, "todo_crlf"), /todo_crlf/);
  });

  it("reject and cancel close the gate; defer needs --until and --until is only for defer", async () => {
    const store = await newGoal();
    expect((await lg(store, "gate", "reject", GOAL, "todo_publish_gate", "--note", "not yet")).code).toBe(0);
    expect((await status(store)).todos.find((t) => t.id === "todo_publish_gate")?.gateDecision).toBe(
      "rejected",
    );
    const store2 = await newGoal();
    expect((await lg(store2, "gate", "cancel", GOAL, "todo_publish_gate")).code).toBe(0);
    const bare = await lg(store2, "gate", "defer", GOAL, "todo_publish_gate");
    expect(bare.code, show(bare)).toBe(2);
    expect(bare.stderr).toMatch(/needs --until COND/);
    const wrong = await lg(
      store2,
      "gate",
      "approve",
      GOAL,
      "todo_publish_gate",
      "--until",
      "at:2030-01-01T00:00:00Z",
    );
    expect(wrong.code, show(wrong)).toBe(2);
    expect(wrong.stderr).toMatch(/only gate defer takes --until/);
    const store3 = await newGoal();
    const d = await lg(
      store3,
      "gate",
      "defer",
      GOAL,
      "todo_publish_gate",
      "--until",
      "at:2030-01-01T00:00:00Z",
    );
    expect(d.code, show(d)).toBe(0);
    expect(await todoStatus(store3, "todo_publish_gate")).toBe("deferred");
  });
});

describe.concurrent("goal accept", () => {
  it("runs the acceptance gates fresh on the current revision: the untouched workspace does not pass", async () => {
    const store = await newGoal();
    const r = await lg(store, "goal", "accept", GOAL, "--json");
    expect(r.code, show(r)).toBe(1);
    const out = parseStdout<{ accepted: boolean; items: { status: string }[] }>(r);
    expect(out.accepted).toBe(false);
    expect(out.items).toHaveLength(3);
    expect(out.items.every((i) => i.status === "ESCALATED")).toBe(true);
  });
});
