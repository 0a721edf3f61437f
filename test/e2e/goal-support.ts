// Helpers for the goal e2e tests: the bundled goal example created in a private store.
import { execFileSync } from "node:child_process";
import { hostname } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { openStore } from "../../src/cli/output/context.js";
import { appendGoal, goalStream } from "../../src/runner/goal/goal-store.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { type CliResult, loopgate, parseStdout, ROOT, show, tempDir } from "./cli.js";

export const GOAL_DIR = join(ROOT, "examples", "goal-csvcol");
export const GOAL_FILE = join(GOAL_DIR, "goal.yaml");
export const GOAL = "csvcol-rfc4180";

/** The todo ids the example declares, in order (read from the goal file by hand, not from loopgate). */
export const EXAMPLE_TODOS = [
  "todo_quoted_fields",
  "todo_crlf",
  "todo_unknown_column",
  "todo_publish_gate",
  "todo_publish",
  "todo_watch_reports",
];

/** Creates the example goal in a fresh store; returns the store. */
export async function newGoal(): Promise<string> {
  const store = tempDir("loopgate-goal-");
  const r = await loopgate(["goal", "new", GOAL_FILE, "--store", store, "--json"]);
  expect(r.code, show(r)).toBe(0);
  return store;
}

/** Runs a goal command against `store`. */
export const lg = (store: string, ...args: string[]) => loopgate([...args, "--store", store]);

/** The goal's status as JSON. */
export async function status(store: string): Promise<{
  streamRevision: number;
  revision: string;
  activation: string;
  runtimeState: string;
  todos: {
    id: string;
    status: string;
    class: string;
    supersededBy: string | null;
    successorOf: string | null;
    noFollowup: string | null;
    gateDecision: string | null;
    completion: { runId: string } | null;
  }[];
}> {
  const r = await lg(store, "goal", "status", GOAL, "--json");
  expect(r.code, show(r)).toBe(0);
  return parseStdout(r);
}

/** The status of one todo. */
export async function todoStatus(store: string, id: string): Promise<string | undefined> {
  return (await status(store)).todos.find((t) => t.id === id)?.status;
}

/** The goal workspace's HEAD, asked of git itself. */
export const head = (store: string) =>
  execFileSync("git", ["rev-parse", "HEAD"], {
    cwd: join(store, "goals", GOAL, "workspace"),
    encoding: "utf8",
  }).trim();

/** Asserts a refusal by a goal rule: exit 1, and the message on stderr naming the rule. */
export async function refused(_store: string, r: CliResult, message: RegExp): Promise<void> {
  expect(r.code, show(r)).toBe(1);
  expect(r.stderr).toMatch(/loopgate: refused: /);
  expect(r.stderr).toMatch(message);
}

/** The run id in `todo run --json`'s envelope. */
export const runIdOf = (r: CliResult) => parseStdout<{ run_id: string; status: string }>(r).run_id;

/** The example's three fix todos and its acceptance items, in goal-file order (read by hand). */
export const FIXES = ["todo_quoted_fields", "todo_crlf", "todo_unknown_column"];
export const ACCEPTANCE = [
  "tasks/quoted-fields/task.yaml#heldout-quoted",
  "tasks/crlf/task.yaml#heldout-crlf",
  "tasks/unknown-column/task.yaml#heldout-unknown",
];
/** The settlement phases of one governed turn, in settlement order (every kind of turn). */
export const SETTLED = [
  "turn_bound",
  "turn_effect_prepared",
  "turn_host_executed",
  "turn_typed_result",
  "turn_validated",
  "turn_effect_prepared",
  "turn_writeback_accepted",
  "turn_quota_spent",
  "turn_scheduler_applied",
  "turn_scheduler_acked",
];

export type Ev = { type: string; data: Record<string, unknown> };
/** The goal stream of the example goal in a folder store, read back from its SQLite file. */
export async function goalEvents(store: string): Promise<Ev[]> {
  const s = SqliteEventStore.open(join(store, "events.db"), { readonly: true });
  try {
    return (await s.readStream(`goal-${GOAL}`)) as never;
  } finally {
    await s.close();
  }
}
const goalWs = (store: string) => join(store, "goals", GOAL, "workspace");
/** Each commit after the import: its subject and its Loopgate-Turn trailer, oldest first. */
export const commits = (store: string) =>
  execFileSync("git", ["log", "--reverse", "--format=%s%x09%(trailers:key=Loopgate-Turn,valueonly)%x00"], {
    cwd: goalWs(store),
    encoding: "utf8",
  })
    .split("\0")
    .map((c) => c.trim())
    .filter(Boolean)
    .slice(1)
    .map((c) => {
      const [subject = "", trailer = ""] = c.split("\t");
      return { subject, trailer: trailer.trim() };
    });
/** stdout of a `--json` goal run: one JSON object per line. */
export const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
/** A turn fact's identity (the turn instance id is what a test compares). */
export const identity = (e: Ev) => e.data.identity as { turn_instance_id: string } | undefined;

/** Appends a turn lease held by another owner on this host (a live process: this test's own pid). */
export async function holdLease(store: string, expiresAt: string, goalId = GOAL): Promise<void> {
  const s = await openStore(store, true);
  try {
    const es = await s.readStream(goalStream(goalId));
    await appendGoal(
      s,
      goalId,
      [
        {
          type: "turn_lease_acquired",
          data: {
            holder: "someone-else",
            owner: { pid: process.pid, host: hostname(), token: "another-owners-token" },
            expires_at: expiresAt,
            previous: null,
          },
        },
      ],
      es.at(-1)?.revision ?? -1,
      () => "runtime",
    );
  } finally {
    await s.close();
  }
}
