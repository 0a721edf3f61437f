// loopgate goal new / status / next / goals / stop / resume, and their refusals.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";
import { EXAMPLE_TODOS, GOAL, GOAL_FILE, head, lg, newGoal, status } from "./goal-support.js";

afterAll(removeTemps);

describe.concurrent("loopgate goal new", () => {
  it("copies the workspace into a git repository in the store, commits it once and records the goal", async () => {
    const store = tempDir("loopgate-goal-");
    const r = await loopgate(["goal", "new", GOAL_FILE, "--store", store, "--json"]);
    expect(r.code, show(r)).toBe(0);
    const out = parseStdout<{ goal: string; revision: string; workspace: string; todos: number }>(r);
    expect(out.goal).toBe(GOAL);
    expect(out.todos).toBe(EXAMPLE_TODOS.length);
    // --json paths are relative to the goal file's folder (absolute with --absolute).
    expect(resolve(dirname(GOAL_FILE), out.workspace)).toBe(join(store, "goals", GOAL, "workspace"));
    // git itself: one commit, HEAD is the recorded revision, the files are the sh-csvcol repository's.
    expect(head(store)).toBe(out.revision);
    const ws = out.workspace;
    expect(execFileSync("git", ["rev-list", "--count", "HEAD"], { cwd: ws, encoding: "utf8" }).trim()).toBe(
      "1",
    );
    const files = execFileSync("git", ["ls-files"], { cwd: ws, encoding: "utf8" }).split("\n");
    expect(files).toContain("bin/csvcol");
    expect(files).toContain("tests/run.sh");
    const s = await status(store);
    expect(s.todos.map((t) => t.id)).toEqual(EXAMPLE_TODOS);
    expect(s.todos.every((t) => t.status === "open")).toBe(true);
    expect(s.revision).toBe(out.revision);
    expect(s.activation).toBe("active");
  });

  it("refuses a second goal with the same id in the same store, and changes nothing", async () => {
    const store = await newGoal();
    const before = head(store);
    const r = await loopgate(["goal", "new", GOAL_FILE, "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/a goal csvcol-rfc4180 already exists in/);
    expect(head(store)).toBe(before);
  });

  it("refuses an invalid goal file with file:line:field, and creates nothing", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "repo"));
    writeFileSync(
      join(dir, "goal.yaml"),
      "id: g\nobjective: x\nworkspace: ./repo\nacceptance: [{ task: t.yaml }]\ntodos:\n  - { id: todo_abc, class: advancement_task, content: x }\n",
    );
    const store = tempDir();
    const r = await loopgate(["goal", "new", join(dir, "goal.yaml"), "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/goal\.yaml:6: todos\[0\]\.task: an advancement_task needs a task file/);
    const g = await loopgate(["goals", "--store", store, "--json"]);
    expect(g.code === 0 ? parseStdout(g) : []).toEqual([]);
  });

  it("refuses a goal whose task file does not load, naming the goal field", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "repo"));
    writeFileSync(join(dir, "t.yaml"), "id: t\nprompt: p\nworkspace: ./repo\ngates: []\n");
    writeFileSync(
      join(dir, "goal.yaml"),
      "id: g\nobjective: x\nworkspace: ./repo\nacceptance: [{ task: t.yaml }]\ntodos:\n  - { id: todo_abc, class: advancement_task, content: x, task: t.yaml }\n",
    );
    const r = await loopgate(["goal", "new", join(dir, "goal.yaml"), "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/goal\.yaml: todos\[0\]\.task: .*a task needs at least one gate/s);
  });

  it("refuses an acceptance gate the task does not declare", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "repo"));
    writeFileSync(
      join(dir, "t.yaml"),
      "id: t\nprompt: p\nworkspace: ./repo\ngates: [{ id: a, run: ['true'] }]\n",
    );
    writeFileSync(
      join(dir, "goal.yaml"),
      "id: g\nobjective: x\nworkspace: ./repo\nacceptance: [{ task: t.yaml, gates: [nope] }]\ntodos:\n  - { id: todo_abc, class: blocker, content: x }\n",
    );
    const r = await loopgate(["goal", "new", join(dir, "goal.yaml"), "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/acceptance\[0\]\.gates\[0\]: t has no gate nope; declared: a/);
  });
});

describe.concurrent("loopgate goal status / next / goals", () => {
  it("status prints a tree with status symbols, the gate waiting on a person, the runtime state and one next action", async () => {
    const store = await newGoal();
    const r = await lg(store, "goal", "status", GOAL);
    expect(r.code, show(r)).toBe(0);
    for (const id of EXAMPLE_TODOS) expect(r.stdout).toMatch(new RegExp(`○ +${id} `));
    expect(r.stdout).toMatch(/gates waiting on a person:\n {2}todo_publish_gate \(scope publish\)/);
    expect(r.stdout).toMatch(/^runtime: eligible/m);
    expect(r.stdout.match(/^next: /gm)).toHaveLength(1);
    expect(r.stdout).toMatch(/^not closed: /m);
  });

  it("next is the interaction contract: eligible, the agent must attempt an advancement todo the gate does not cover", async () => {
    const store = await newGoal();
    const r = await lg(store, "goal", "next", GOAL, "--json");
    expect(r.code, show(r)).toBe(0);
    const c = parseStdout<{
      runtime_state: string;
      agent_channel: { must_attempt: boolean; selected_todo?: string | null };
      user_channel: { action_required: boolean; gates: unknown[] };
      next_cli_actions: string[];
    }>(r);
    expect(c.runtime_state).toBe("eligible");
    expect(c.agent_channel.must_attempt).toBe(true);
    // The advancement todos are the ones with a task and no required scope (the goal file says so).
    expect(["todo_quoted_fields", "todo_crlf", "todo_unknown_column"]).toContain(
      c.agent_channel.selected_todo,
    );
    expect(c.next_cli_actions.length).toBeGreaterThan(0);
  });

  it("goals lists each goal of the store with its runtime state", async () => {
    const store = await newGoal();
    const j = await loopgate(["goals", "--store", store, "--json"]);
    expect(j.code, show(j)).toBe(0);
    const rows = parseStdout<{ goal: string; activation: string; runtime_state: string }[]>(j);
    expect(rows).toMatchObject([{ goal: GOAL, activation: "active", runtime_state: "eligible" }]);
    const t = await loopgate(["goals", "--store", store]);
    expect(t.stdout).toMatch(/^csvcol-rfc4180 {2}active {2}eligible {2}todos 0\/6 done/m);
  });

  it("a dirty goal workspace is blocked_health, and clean again is eligible", async () => {
    const store = await newGoal();
    const ws = join(store, "goals", GOAL, "workspace");
    writeFileSync(join(ws, "stray.txt"), "x\n");
    const dirty = await lg(store, "goal", "next", GOAL, "--json");
    expect(parseStdout<{ runtime_state: string }>(dirty).runtime_state).toBe("blocked_health");
    const text = await lg(store, "goal", "status", GOAL);
    expect(text.stdout).toMatch(/uncommitted changes.*stray\.txt/);
    const run = await lg(store, "todo", "run", GOAL, "todo_crlf", "--noop");
    expect(run.code, show(run)).toBe(1);
    expect(run.stderr).toMatch(/refused: blocked_health: .*uncommitted changes/);
    execFileSync("rm", [join(ws, "stray.txt")]);
    expect((await status(store)).runtimeState).toBe("eligible");
  });

  it("a task file changed since the goal recorded it is blocked_health", async () => {
    const dir = tempDir();
    execFileSync("cp", ["-r", join(GOAL_FILE, ".."), join(dir, "g")]);
    execFileSync("cp", ["-r", join(GOAL_FILE, "..", "..", "sh-csvcol"), join(dir, "sh-csvcol")]);
    const store = tempDir();
    const r = await loopgate(["goal", "new", join(dir, "g", "goal.yaml"), "--store", store]);
    expect(r.code, show(r)).toBe(0);
    const task = join(dir, "g", "tasks", "crlf", "task.yaml");
    copyFileSync(task, `${task}.orig`);
    writeFileSync(task, `${"# edited\n"}${execFileSync("cat", [`${task}.orig`], { encoding: "utf8" })}`);
    const s = await lg(store, "goal", "status", GOAL);
    expect(s.stdout).toMatch(/^runtime: blocked_health/m);
    expect(s.stdout).toMatch(/todo_crlf: the task file .* changed since it was recorded/);
  });

  it("an unknown goal is bad input naming the store", async () => {
    const store = await newGoal();
    for (const sub of ["status", "next"]) {
      const r = await lg(store, "goal", sub, "nope");
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toMatch(/no goal nope in /);
    }
  });

  it("an unknown or missing subcommand lists the ones there are", async () => {
    const r = await loopgate(["goal", "frobnicate", GOAL]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(
      /unknown subcommand "frobnicate"; one of (init, )?new, status, next, stop, resume, accept/,
    );
    const m = await loopgate(["todo"]);
    expect(m.stderr).toMatch(/loopgate todo: missing the subcommand/);
  });

  it("--help of each goal command shows its subcommands", async () => {
    for (const [cmd, words] of [
      [
        "goal",
        ["goal new GOAL_FILE", "goal status GOAL", "goal next GOAL", "goal stop GOAL", "goal resume GOAL"],
      ],
      [
        "todo",
        [
          "todo add GOAL TODO",
          "todo done GOAL TODO --evidence RUN",
          "todo supersede GOAL TODO NEW_TODO",
          "todo close-no-followup",
        ],
      ],
      ["gate", ["gate approve GOAL GATE", "gate defer GOAL GATE --until COND"]],
      ["goals", ["goals [--store DIR] [--json]"]],
    ] as const) {
      const r = await loopgate([cmd, "--help"]);
      expect(r.code, show(r)).toBe(0);
      for (const w of words) expect(r.stdout).toContain(`loopgate ${w}`);
    }
  });
});

describe.concurrent("loopgate goal stop / resume", () => {
  it("stop pauses the goal (never reported closed), resume makes it eligible again", async () => {
    const store = await newGoal();
    const s = await lg(store, "goal", "stop", GOAL, "--note", "holiday");
    expect(s.code, show(s)).toBe(0);
    const st = await status(store);
    expect(st.activation).toBe("stopped");
    expect(st.runtimeState).toBe("paused");
    const text = await lg(store, "goal", "status", GOAL);
    expect(text.stdout).not.toMatch(/closure: terminal/);
    const r = await lg(store, "goal", "resume", GOAL);
    expect(r.code, show(r)).toBe(0);
    expect((await status(store)).runtimeState).toBe("eligible");
  });
});
