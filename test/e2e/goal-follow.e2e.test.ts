// A person can follow a goal, on both stores: the turn whose settlement closes the goal reads closed
// (exit 0, never "stopped … goal resume"); `goal history` lists every turn with its phase receipts, runs,
// commit, spend and ACK, and every person's write in order with its origin; `loopgate events GOAL` prints
// the goal's stream; a turn in flight shows as running in `goal status` (from its lease, never as a
// stored status); --json paths are relative to the goal file's folder (absolute with --absolute); and the
// goal commands run from the folder `goal new` ran in find its store without --store, every `next:` line
// they print running as pasted.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { BIN, type CliResult, loopgate, parseStdout, ROOT, removeTemps, show, tempDir } from "./cli.js";
import { GOAL, jsonLines } from "./goal-support.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
}, 60_000);
afterAll(async () => {
  removeTemps();
  await db?.drop();
});

/** The example goal and the repository it names, in a folder of their own (the goal file's folder is `goal-csvcol`). */
function workFolder(): string {
  const dir = tempDir("loopgate-follow-");
  cpSync(join(ROOT, "examples", "goal-csvcol"), join(dir, "goal-csvcol"), { recursive: true });
  cpSync(join(ROOT, "examples", "sh-csvcol"), join(dir, "sh-csvcol"), { recursive: true });
  return dir;
}

/** A command line exactly as a person pastes it into a shell in `cwd` (no LOOPGATE_STORE). */
function paste(line: string, cwd: string): CliResult {
  const env = { ...process.env };
  delete env.LOOPGATE_STORE;
  const r = spawnSync("sh", ["-c", line], { cwd, env, encoding: "utf8", timeout: 110_000 });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** The command of a `next: CMD  (why)` line (the first one printed). */
function nextCommand(stdout: string): string {
  const line = stdout.split("\n").find((l) => l.startsWith("next: "));
  expect(line, stdout).toBeDefined();
  return (line as string).slice("next: ".length).split("  (")[0] as string;
}

type HistoryJson = {
  turns: number;
  operator_writes: number;
  in_flight: {
    state: string;
    holder: string;
    pid: number;
    turn: { work: { todo_id?: string }; phase: string } | null;
  } | null;
  entries: (
    | {
        kind: "turn";
        number: number;
        work: { kind: string };
        end: string;
        phases: { phase: string; revision: number }[];
        runs: string[];
        commit: { commit: string } | null;
        spend: { turns: number } | null;
        hint: { action: string; terminal: boolean } | null;
        ack: { mode: string } | null;
      }
    | { kind: "write"; revision: number; origin: string; type: string; subject: string | null }
  )[];
};

/** The settlement phases of one turn as history names them, in order. */
const PHASES = [
  "bind",
  "host_execute",
  "host_execute",
  "typed_result",
  "validation",
  "durable_writeback",
  "durable_writeback",
  "quota_spend",
  "scheduler_apply",
  "scheduler_ack",
];

describe.each([
  { store: "folder", closer: "run" },
  { store: "postgres", closer: "tick" },
] as const)("following a goal ($store store)", ({ store, closer }) => {
  it("closes as closed, with its history, its events, relative paths and hints that paste", async () => {
    const work = workFolder();
    // The folder store is found by the rule alone (goal new made ./.loopgate here); a database is named.
    const storeArgs = store === "postgres" ? ["--store", db.url] : [];
    const lg = (...args: string[]) => loopgate([...args, ...storeArgs], { cwd: work });

    const created = await lg("goal", "new", "goal-csvcol/goal.yaml");
    expect(created.code, show(created)).toBe(0);
    if (store === "folder") {
      expect(existsSync(join(work, ".loopgate", "events.db"))).toBe(true);
      expect(existsSync(join(work, "goal-csvcol", ".loopgate"))).toBe(false);
    }
    // goal new's next: line, pasted as printed, finds the goal.
    const statusHint = nextCommand(created.stdout);
    expect(statusHint).toContain(`goal status ${GOAL}`);
    const pastedStatus = paste(statusHint, work);
    expect(pastedStatus.code, show(pastedStatus)).toBe(0);
    // goal status's gate line and its next: line run as pasted: the real gate, the real todo, the store.
    const gateLine = pastedStatus.stdout.split("\n").find((l) => l.includes("gate approve"));
    const approve = (gateLine as string)
      .slice((gateLine as string).indexOf(": ") + 2)
      .split(" (or")[0] as string;
    expect(approve).not.toMatch(/GATE|\|/);
    const approved = paste(approve, work);
    expect(approved.code, show(approved)).toBe(0);
    expect(approved.stdout).toMatch(/todo_publish_gate: approved/);
    const next = nextCommand((await lg("goal", "status", GOAL)).stdout);
    expect(next).not.toMatch(/\b(RUN_ID|TODO_ID|TEXT|GOAL|TODO)\b/);
    if (store === "postgres") expect(next).toContain("--store postgres://");
    const first = paste(next, work);
    expect(first.code, show(first)).toBe(0);

    // The rest of the route: the person's step and the monitor closed, the closure intent, the other fixes.
    for (const [todo, why] of [
      ["todo_publish", "tagged v1"],
      ["todo_watch_reports", "no reports expected"],
    ] as const)
      expect((await lg("todo", "close-no-followup", GOAL, todo, "--rationale", why)).code).toBe(0);
    expect((await lg("goal", "close", GOAL, "--rationale", "three fixes proved")).code).toBe(0);
    for (;;) {
      const s = parseStdout<{ todos: { id: string; status: string }[] }>(
        await lg("goal", "status", GOAL, "--json"),
      );
      if (
        ["todo_quoted_fields", "todo_crlf", "todo_unknown_column"].every(
          (id) => s.todos.find((t) => t.id === id)?.status === "done",
        )
      )
        break;
      const t = await lg("goal", "tick", GOAL);
      expect(t.code, show(t)).toBe(0);
    }
    // A goal closes only with its route on record: closure asks for a vision checkpoint.
    const vision = await lg("goal", "vision", "record", GOAL, "--route", "three fixes, then acceptance");
    expect(vision.code, show(vision)).toBe(0);

    // The turn that proves acceptance closes the goal: it reads closed and exits 0.
    if (closer === "run") {
      const done = await lg("goal", "run", GOAL);
      expect(done.code, show(done)).toBe(0);
      expect(done.stdout).toMatch(new RegExp(`goal ${GOAL} is closed \\(terminal\\) after 1 tick`));
      expect(done.stdout).not.toMatch(/stopped|goal resume/);
    } else {
      const done = await lg("goal", "tick", GOAL, "--json");
      expect(done.code, show(done)).toBe(0);
      const o = parseStdout<{ kind: string; wake: { action: string; terminal?: boolean } }>(done);
      expect(o).toMatchObject({ kind: "advanced", wake: { action: "stop", terminal: true } });
      const text = await lg("goal", "run", GOAL, "--json");
      expect(text.code, show(text)).toBe(0);
      expect(jsonLines(text.stdout).at(-1)).toMatchObject({ stop: "terminal", exit_code: 0 });
    }

    // The history: every turn in order with its receipts; the person's writes in order, with their origin.
    const hr = await lg("goal", "history", GOAL, "--json");
    expect(hr.code, show(hr)).toBe(0);
    const h = parseStdout<HistoryJson>(hr);
    const turns = h.entries.filter((e) => e.kind === "turn");
    expect(turns.map((t) => t.number)).toEqual([1, 2, 3, 4]);
    expect(turns.map((t) => t.work.kind)).toEqual(["todo", "todo", "todo", "acceptance"]);
    for (const t of turns) {
      expect(t.end).toBe("settled");
      expect(t.phases.map((p) => p.phase)).toEqual(PHASES);
      expect(t.spend).toEqual({ turns: 1, tokens: 0, cost_usd: 0 });
      expect(t.ack?.mode).toMatch(/^host_(match|updated)$/);
      expect(t.runs.length).toBeGreaterThan(0);
    }
    expect(turns.slice(0, 3).every((t) => t.commit !== null)).toBe(true);
    expect(turns.at(-1)?.runs).toHaveLength(3); // one per acceptance item
    expect(turns.map((t) => t.hint?.terminal)).toEqual([false, false, false, true]);
    const writes = h.entries.filter((e) => e.kind === "write" && e.origin === "operator");
    const decided = writes.filter(
      (w) => w.kind === "write" && w.type !== "todo_added" && w.type !== "goal_created",
    );
    expect(decided.map((w) => (w.kind === "write" ? [w.type, w.subject] : []))).toEqual([
      ["gate_decided", "todo_publish_gate"],
      ["todo_closed_no_followup", "todo_publish"],
      ["todo_closed_no_followup", "todo_watch_reports"],
      ["goal_no_followup_declared", null],
      ["vision_recorded", null],
    ]);
    const revisions = h.entries.map(
      (e) => (e.kind === "turn" ? e.phases[0]?.revision : e.revision) as number,
    );
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(h.in_flight).toBeNull();
    const text = await lg("goal", "history", GOAL);
    expect(text.stdout).toMatch(/turn 4 · t4 · acceptance .* · settled/);
    expect(text.stdout).toMatch(/operator +gate todo_publish_gate approved/);

    // `loopgate events goal-ID` and `events GOAL`: the goal's stream, every event as a JSON line.
    const ev = await lg("events", `goal-${GOAL}`, "--json");
    expect(ev.code, show(ev)).toBe(0);
    const lines = jsonLines(ev.stdout) as { type: string; revision: number }[];
    expect(lines.map((e) => e.revision)).toEqual(lines.map((_, i) => i));
    expect(lines.filter((e) => e.type === "turn_bound")).toHaveLength(4);
    const readable = await lg("events", GOAL);
    expect(readable.code, show(readable)).toBe(0);
    expect(readable.stdout).toMatch(/gate_decided +gate todo_publish_gate approved/);
    expect((await lg("events", "goal-no-such-goal")).stderr).toMatch(/no goal no-such-goal in /);

    // --json paths: relative to the goal file's folder; absolute with --absolute.
    const rel = parseStdout<{
      workspacePath: string;
      todos: { task: { path: string } | null }[];
      acceptance: { ref: string }[];
    }>(await lg("goal", "status", GOAL, "--json"));
    expect(rel.todos[0]?.task?.path).toBe("tasks/quoted-fields/task.yaml");
    expect(rel.acceptance[0]?.ref).toBe("tasks/quoted-fields/task.yaml#heldout-quoted");
    expect(rel.workspacePath.startsWith("/")).toBe(false);
    const abs = parseStdout<typeof rel>(await lg("goal", "status", GOAL, "--json", "--absolute"));
    expect(abs.todos[0]?.task?.path).toBe(join(work, "goal-csvcol", "tasks", "quoted-fields", "task.yaml"));
    // A folder store's workspace is a folder; a PostgreSQL goal's lives in the database (no local path).
    if (store === "folder")
      expect(abs.workspacePath).toBe(join(work, ".loopgate", "goals", GOAL, "workspace"));
    const contract = parseStdout<{ workspace_guard: { workspace: string | null } }>(
      await lg("goal", "next", GOAL, "--json"),
    );
    expect(contract.workspace_guard.workspace?.startsWith("/") ?? false).toBe(false);
  }, 300_000);
});

describe("a turn in flight (folder store)", () => {
  let tick: ChildProcess | null = null;
  afterAll(() => {
    tick?.kill("SIGKILL");
  });

  it("goal status shows it running from the lease; the todo's status stays open", async () => {
    const work = workFolder();
    const release = join(work, "release");
    const lg = (...args: string[]) => loopgate(args, { cwd: work });
    expect((await lg("goal", "new", "goal-csvcol/goal.yaml")).code).toBe(0);
    // A builder that waits until the test lets it go: the turn stays in host_execute meanwhile.
    const builder = `sh -c 'while [ ! -e ${release} ]; do sleep 0.05; done'`;
    const env = { ...process.env };
    delete env.LOOPGATE_STORE;
    tick = spawn(process.execPath, [BIN, "goal", "tick", GOAL, "--builder", builder, "--unsafe-no-sandbox"], {
      cwd: work,
      env,
      stdio: "ignore",
    });
    const exited = new Promise<number | null>((resolve) => tick?.on("close", (code) => resolve(code)));
    type Status = {
      todos: { id: string; status: string }[];
      inFlight: {
        state: string;
        holder: string;
        pid: number;
        since: string;
        turn: { number: number; work: { todo_id: string }; phase: string } | null;
      } | null;
    };
    let s: Status | null = null;
    for (let i = 0; i < 600; i++) {
      s = parseStdout<Status>(await lg("goal", "status", GOAL, "--json"));
      if (s.inFlight?.turn?.phase === "host_execute") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(s?.inFlight).toMatchObject({
      state: "running",
      holder: "oracle",
      pid: tick.pid,
      turn: { number: 1, work: { todo_id: "todo_quoted_fields" }, phase: "host_execute" },
    });
    expect(Date.parse(s?.inFlight?.since ?? "")).not.toBeNaN();
    expect(s?.todos.find((t) => t.id === "todo_quoted_fields")?.status).toBe("open");
    const text = await lg("goal", "status", GOAL);
    expect(text.stdout).toMatch(/todo_quoted_fields .*\[running in turn 1 \(host_execute\)/);
    expect(text.stdout).toMatch(
      new RegExp(
        `in flight: running: turn 1 · todo todo_quoted_fields · .* by oracle \\(process ${tick.pid} on `,
      ),
    );
    const h = parseStdout<HistoryJson>(await lg("goal", "history", GOAL, "--json"));
    expect(h.in_flight?.state).toBe("running");
    expect(h.entries.filter((e) => e.kind === "turn").map((t) => (t.kind === "turn" ? t.end : ""))).toEqual([
      "in_progress",
    ]);

    writeFileSync(release, "");
    expect(await exited).not.toBeNull();
    tick = null;
    const after = parseStdout<Status>(await lg("goal", "status", GOAL, "--json"));
    expect(after.inFlight).toBeNull();
  }, 240_000);
});
