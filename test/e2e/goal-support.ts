// Helpers for the goal e2e tests: the bundled goal example created in a private store.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
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
