// Gates guard the effect, and done means persisted — through the CLI, on a folder store (SQLite) and on
// PostgreSQL, with the bundled goal example (its own copy per goal, so each goal has an id of its own):
// - `todo done --evidence RUN` of a run whose change the goal workspace lacks is refused
//   (rule durable_writeback_before_done); `goal next` offers only the governed turn, which commits it;
//   a run that changed nothing (the outcome already in the workspace) still completes a todo;
// - `todo run` of work a gate covers, while throttled, or while blocked_health, is refused before any
//   builder starts, naming the gate or state; work no gate covers still runs;
// - a deferred gate whose --until condition holds is asked again (goal next, goal status) instead of
//   leaving the goal waiting with no next action; it can be decided or deferred anew;
// - `todo add` / `todo supersede` with a scope no user_gate decides is refused (rule scope_needs_gate).
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

let db: FreshDatabase | undefined;
beforeAll(async () => {
  db = await freshDatabase();
}, 60_000);
afterAll(async () => {
  removeTemps();
  await db?.drop();
});

type Contract = {
  runtime_state: string;
  scheduler_hint: { action: string; not_before: string | null };
  user_channel: { gates: { gate_id: string; scope: string; asked_again: boolean }[] };
  next_cli_actions: { argv: string[] }[];
};
type Status = {
  revision: string;
  runtimeState: string;
  todos: { id: string; status: string; completion: { runId: string } | null }[];
};

interface Goal {
  id: string;
  /** The copied goal file's folder (its tasks/ are there). */
  dir: string;
  /** The folder store's path (SQLite), or null on PostgreSQL. */
  folder: string | null;
  at(args: string[]): Promise<CliResult>;
}

let made = 0;
/** A copy of the bundled goal under a fresh id (and `budget`), created in the store of `kind`. */
async function newGoal(kind: "sqlite" | "postgres", budget: string): Promise<Goal> {
  const id = `effect-${kind}-${++made}`;
  const root = tempDir("loopgate-effect-");
  cpSync(join(ROOT, "examples", "goal-csvcol"), join(root, "goal"), { recursive: true });
  cpSync(exampleDir("sh-csvcol"), join(root, "sh-csvcol"), { recursive: true });
  const file = join(root, "goal", "goal.yaml");
  const text = readFileSync(file, "utf8")
    .replace(/^id: .*$/m, `id: ${id}`)
    .replace(/^budget: .*$/m, `budget: ${budget}`);
  writeFileSync(file, text);
  const folder = kind === "sqlite" ? join(root, "store") : null;
  const store = folder ?? (db as FreshDatabase).url;
  const host = join(root, "host");
  cpSync(join(root, "goal"), host, { recursive: true }); // any folder: where a Postgres host keeps run files
  const at = (args: string[]) => loopgate([...args, "--store", store], { cwd: host });
  const r = await at(["goal", "new", file, "--json"]);
  expect(r.code, show(r)).toBe(0);
  return { id, dir: join(root, "goal"), folder, at };
}

const contract = async (g: Goal) => {
  const r = await g.at(["goal", "next", g.id, "--json"]);
  expect(r.code, show(r)).toBe(0);
  return parseStdout<Contract>(r);
};
const status = async (g: Goal) => {
  const r = await g.at(["goal", "status", g.id, "--json"]);
  expect(r.code, show(r)).toBe(0);
  return parseStdout<Status>(r);
};
const todoOf = async (g: Goal, id: string) => (await status(g)).todos.find((t) => t.id === id);
const runCount = async (g: Goal) => {
  const r = await g.at(["runs", "--json"]);
  expect(r.code, show(r)).toBe(0);
  return parseStdout<unknown[]>(r).length;
};
/** A refusal by a goal rule: exit 1, the message on stderr. */
function refused(r: CliResult, message: RegExp): void {
  expect(r.code, show(r)).toBe(1);
  expect(r.stderr).toMatch(/loopgate: refused: /);
  expect(r.stderr).toMatch(message);
}
const ok = (r: CliResult) => expect(r.code, show(r)).toBe(0);

describe.each(["sqlite", "postgres"] as const)("on %s", (kind) => {
  it("todo done refuses a run whose change is not in the goal workspace; goal next offers only the governed turn, which persists it", async () => {
    const g = await newGoal(kind, "{ window: 24h, turns: 20, cost_usd: 5 }");
    const c = await contract(g);
    const actions = c.next_cli_actions.map((a) => a.argv.join(" "));
    expect(actions[0]).toBe(`loopgate goal tick ${g.id}`);
    // Never `todo run` then `todo done --evidence RUN`: that sequence writes nothing back.
    expect(actions.filter((a) => /^loopgate todo run |--evidence RUN/.test(a))).toEqual([]);
    const rev0 = (await status(g)).revision;

    const run = await g.at(["todo", "run", g.id, "todo_quoted_fields"]);
    ok(run);
    expect(run.stdout).toMatch(
      /not persisted: the run changed 1 path\(s\) \(bin\/csvcol\) that the goal workspace does not hold.*rule durable_writeback_before_done.*goal tick/,
    );
    const runId = /· run (\S+) · task/.exec(run.stdout)?.[1] ?? "";
    expect(runId).not.toBe("");
    refused(
      await g.at(["todo", "done", g.id, "todo_quoted_fields", "--evidence", runId]),
      new RegExp(
        `complete_todo: rule durable_writeback_before_done: run ${runId} changed 1 path\\(s\\) \\(bin/csvcol\\) that the goal workspace does not hold at ${rev0.slice(0, 12)}`,
      ),
    );
    expect((await todoOf(g, "todo_quoted_fields"))?.status).toBe("open");
    expect((await status(g)).revision).toBe(rev0);

    // The sequence goal next offers persists it: one governed turn, its commit and the completion.
    const tick = await g.at(["goal", "tick", g.id]);
    ok(tick);
    expect(tick.stdout).toMatch(/durable_writeback: commit \w+ on /);
    const after = await status(g);
    expect(after.revision).not.toBe(rev0);
    const done = after.todos.find((t) => t.id === "todo_quoted_fields");
    expect(done?.status).toBe("done");
    expect(done?.completion?.runId).toMatch(/^turn-/);

    // A run that changed nothing proves a todo on its own: its outcome is already at the revision.
    ok(
      await g.at([
        "todo",
        "add",
        g.id,
        "todo_quoted_again",
        "--class",
        "advancement_task",
        "--task",
        join(g.dir, "tasks", "quoted-fields", "task.yaml"),
        "--content",
        "Quoted fields still read right",
      ]),
    );
    const check = await g.at(["todo", "run", g.id, "todo_quoted_again", "--noop"]);
    ok(check);
    expect(check.stdout).toMatch(/evidence \(the run changed nothing/);
    const checkId = /· run (\S+) · task/.exec(check.stdout)?.[1] ?? "";
    ok(await g.at(["todo", "done", g.id, "todo_quoted_again", "--evidence", checkId]));
    expect((await todoOf(g, "todo_quoted_again"))?.completion?.runId).toBe(checkId);
    expect((await status(g)).revision).toBe(after.revision);
    // Once: the todo is no longer open.
    refused(
      await g.at(["todo", "done", g.id, "todo_quoted_again", "--evidence", checkId]),
      /rule open_to_done/,
    );
  }, 300_000);

  it("gates guard the effect: todo run of covered work, throttled or unhealthy runs nothing; a due deferred gate is asked again", async () => {
    const g = await newGoal(kind, "{ window: 24h, turns: 1 }");
    const crlf = join(g.dir, "tasks", "crlf", "task.yaml");
    ok(
      await g.at([
        "todo",
        "add",
        g.id,
        "todo_crlf_release",
        "--class",
        "advancement_task",
        "--task",
        crlf,
        "--content",
        "CRLF in the release build",
        "--requires",
        "publish",
      ]),
    );
    const runs0 = await runCount(g);
    refused(
      await g.at(["todo", "run", g.id, "todo_crlf_release", "--oracle"]),
      /rule decision_scope: todo_crlf_release .*scope publish: gate todo_publish_gate waits on a person; nothing was run.*gate approve/,
    );
    expect(await runCount(g)).toBe(runs0);

    if (g.folder) {
      // blocked_health: a stray file in the goal workspace refuses every run, naming the state.
      const stray = join(g.folder, "goals", g.id, "workspace", "stray.txt");
      writeFileSync(stray, "by hand\n");
      refused(
        await g.at(["todo", "run", g.id, "todo_crlf", "--oracle"]),
        /blocked_health: .*stray\.txt.*nothing was run/,
      );
      rmSync(stray);
      expect(await runCount(g)).toBe(runs0);
    }

    // A scope no user_gate decides would hold its todo forever: refused at the write.
    const legal = ["--class", "user_action", "--content", "Sign off", "--requires", "legal"];
    refused(
      await g.at(["todo", "add", g.id, "todo_legal", ...legal]),
      /add_todo: rule scope_needs_gate: todo_legal requires the decision scope legal, which no user_gate of the goal covers; declared scopes: publish/,
    );
    refused(
      await g.at(["todo", "supersede", g.id, "todo_publish", "todo_publish_legal", ...legal]),
      /supersede_todo: rule scope_needs_gate: todo_publish_legal requires the decision scope legal/,
    );

    // Deferred until todo_crlf is done: not asked yet, and it still holds the work it covers.
    ok(await g.at(["gate", "defer", g.id, "todo_publish_gate", "--until", "todo:todo_crlf=done"]));
    expect((await contract(g)).user_channel.gates).toEqual([]);
    refused(
      await g.at(["todo", "run", g.id, "todo_crlf_release", "--oracle"]),
      /gate todo_publish_gate is deferred until its condition holds; nothing was run/,
    );
    // Everything else is closed, and the condition comes true: only the gate's work is left.
    const rest = ["todo_quoted_fields", "todo_unknown_column", "todo_publish", "todo_watch_reports"];
    for (const t of [...rest, "todo_crlf"])
      ok(await g.at(["todo", "close-no-followup", g.id, t, "--rationale", "not in this goal"]));
    const asked = await contract(g);
    expect(asked.runtime_state).toBe("operator_gate");
    expect(asked.scheduler_hint.action).toBe("ask_user");
    expect(asked.user_channel.gates.map((x) => [x.gate_id, x.scope, x.asked_again])).toEqual([
      ["todo_publish_gate", "publish", true],
    ]);
    expect(asked.next_cli_actions[0]?.argv).toEqual([
      "loopgate",
      "gate",
      "approve",
      g.id,
      "todo_publish_gate",
    ]);
    const text = await g.at(["goal", "status", g.id]);
    ok(text);
    expect(text.stdout).toMatch(/◷! +todo_publish_gate .*asked again \(todo_crlf is done\)/);
    expect(text.stdout).toMatch(
      /gates waiting on a person:\n {2}todo_publish_gate \(scope publish, asked again\): .*gate approve /,
    );
    expect(text.stdout).toMatch(/runtime: operator_gate — waiting on a person: gate todo_publish_gate/);

    // Asked again, the person may say "later" again: a new condition, and the goal waits on it.
    const again = await g.at([
      "gate",
      "defer",
      g.id,
      "todo_publish_gate",
      "--until",
      "at:2999-01-01T00:00:00Z",
      "--json",
    ]);
    ok(again);
    expect(parseStdout<{ events: string[] }>(again).events).toEqual(["todo_reopened", "todo_deferred"]);
    const later = await contract(g);
    expect([later.runtime_state, later.user_channel.gates]).toEqual(["waiting", []]);
    expect(later.scheduler_hint).toEqual({
      action: "wait_condition",
      not_before: "2999-01-01T00:00:00Z",
    });

    // Approved: the work it covers runs in a governed turn, which spends the budget's one turn.
    ok(await g.at(["gate", "approve", g.id, "todo_publish_gate", "--note", "ship it"]));
    ok(await g.at(["goal", "tick", g.id]));
    expect((await todoOf(g, "todo_crlf_release"))?.status).toBe("done");
    const runs1 = await runCount(g);
    ok(
      await g.at([
        "todo",
        "add",
        g.id,
        "todo_unknown_again",
        "--class",
        "advancement_task",
        "--task",
        join(g.dir, "tasks", "unknown-column", "task.yaml"),
        "--content",
        "Unknown columns, again",
      ]),
    );
    refused(
      await g.at(["todo", "run", g.id, "todo_unknown_again", "--oracle"]),
      /throttled: the goal's budget is spent \(turns_per_window\); nothing was run .*the quota window reopens at /,
    );
    expect(await runCount(g)).toBe(runs1);
  }, 300_000);
});
