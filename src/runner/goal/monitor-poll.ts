import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import type { MonitorSpec, TodoSpec } from "../../core/events/goal/goal-events.js";
import type { PollFailureKind } from "../../core/events/goal/monitor-events.js";
import type { GoalState } from "../../core/goal/goal-state-shape.js";
import { type MonitorGoalCommand, monitorPollCommand } from "../../core/goal/monitor-goal.js";
import { InputError } from "../../core/kernel/errors.js";
import type { ProcessLimits } from "../../core/task/limits.js";
import { runSandboxed, type SandboxMode } from "../../sandbox/bubblewrap.js";
import { scrubbedEnv } from "../../sandbox/environment.js";

/**
 * A continuous monitor's poll: its argv run in the sandbox like a gate (bubblewrap, no
 * network unless asked, a clean environment, the monitor's timeout). Its argv resolves against the goal
 * file's folder, as everything else the goal file names does (`sh monitor/reports.sh` beside goal.yaml):
 * that folder is its working directory, and it sees it and `tree` (the turn's revision of the goal
 * workspace, `$LOOPGATE_GOAL_WORKSPACE`) read-only; a store inside the goal folder is masked. Without a
 * goal folder (a goal recorded without its file) the poll runs in `tree`. The observation is the sha256
 * of its normalized stdout. A timeout, a crash or a non-zero exit is a typed poll failure: never a
 * material change, never a hash; a goal folder that is gone is a `spawn_failed` poll failure.
 */
export interface PollOptions {
  sandbox: SandboxMode;
  /** The goal file's folder: the poll's working directory (read-only). */
  goalDir?: string;
  /** Paths inside `goalDir` the poll must not see (the store, when it lives beside the goal file). */
  masked?: readonly string[];
  /** Give the poll the network (a monitor of something remote). Default false, as for gates. */
  network?: boolean;
  /** Extra environment variables (nothing of the caller's passes otherwise). */
  env?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  limits?: ProcessLimits;
}

export type PollResult =
  | { ok: true; result_hash: string; output_excerpt: string; exit_code: 0; duration_ms: number }
  | {
      ok: false;
      failure: PollFailureKind;
      exit_code: number | null;
      output_excerpt: string;
      detail: string;
      duration_ms: number;
    };

/** The most stdout hashed (a poll that prints more is cut there, and the excerpt says so). */
export const POLL_CAPTURE_BYTES = 4 * 1024 * 1024;
const EXCERPT = 2000;

/** Stdout as compared: CRLF → LF, trailing spaces of each line and trailing blank lines dropped. */
export function normalizePollOutput(stdout: string): string {
  return stdout
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((l) => l.replace(/[ \t]+$/, ""))
    .join("\n")
    .replace(/\n+$/, "");
}

export const pollHash = (stdout: string) =>
  `sha256:${createHash("sha256").update(normalizePollOutput(stdout), "utf8").digest("hex")}`;

/** Runs one poll of `spec` on the tree `at` (in `opts.goalDir` when given). Never throws for the poll's own failure; a missing bwrap throws. */
export async function pollMonitor(spec: MonitorSpec, at: string, opts: PollOptions): Promise<PollResult> {
  const timeoutMs = spec.timeout_seconds * 1000;
  const tree = resolve(at);
  const dir = opts.goalDir === undefined ? undefined : resolve(opts.goalDir);
  if (dir !== undefined && !statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    return {
      ok: false,
      failure: "spawn_failed",
      exit_code: null,
      output_excerpt: "",
      detail: `the poll could not start: the goal file's folder ${dir}, where its argv resolves, is not there`,
      duration_ms: 0,
    };
  const inside = (p: string) => {
    const rel = dir === undefined ? ".." : relative(dir, p);
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  };
  const r = await runSandboxed(
    {
      argv: spec.argv,
      cwd: dir ?? tree,
      writable: [],
      readonly: dir === undefined ? [tree] : [dir, tree],
      // The store beside the goal file stays hidden; the revision's tree inside it is mounted after the mask.
      masked: (opts.masked ?? []).map((p) => resolve(p)).filter(inside),
      env: scrubbedEnv({ home: "/tmp", extra: { ...opts.env, LOOPGATE_GOAL_WORKSPACE: tree } }),
      network: opts.network === true,
      timeoutMs,
      maxOutputBytes: EXCERPT * 2,
      captureBytes: POLL_CAPTURE_BYTES,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.limits ? { limits: opts.limits } : {}),
    },
    opts.sandbox,
  );
  const excerpt = r.output.slice(0, EXCERPT);
  const fail = (failure: PollFailureKind, detail: string): PollResult => ({
    ok: false,
    failure,
    exit_code: r.exitCode,
    output_excerpt: excerpt,
    detail,
    duration_ms: r.durationMs,
  });
  if (r.spawnError) return fail("spawn_failed", `the poll could not start: ${r.spawnError}`);
  if (r.timedOut) return fail("timeout", `the poll timed out after ${spec.timeout_seconds}s`);
  if (r.exitCode === null) return fail("crashed", `the poll was killed by ${r.signal ?? "a signal"}`);
  if (r.exitCode !== 0) return fail("exit_nonzero", `the poll exited ${r.exitCode}`);
  const out = r.streams?.stdout.toString("utf8") ?? "";
  const cut = r.streams?.overflow ? ` (stdout cut at ${POLL_CAPTURE_BYTES} bytes before hashing)` : "";
  return {
    ok: true,
    result_hash: pollHash(out),
    output_excerpt: `${out.slice(0, EXCERPT)}${cut}`,
    exit_code: 0,
    duration_ms: r.durationMs,
  };
}

/**
 * One monitor turn's host_execute and typed_result: polls `todoId` of `state` in `tree` and returns the
 * poll and the goal command that records it under `operationId` (the turn's writeback effect_ref). The
 * caller appends the command's events in one goal append; before polling, a caller resuming a turn
 * checks `monitorOperation(state, operationId)` (readback: committed → reuse, absent → poll).
 */
export async function observeMonitor(
  state: GoalState,
  todoId: string,
  operationId: string,
  now: Date,
  tree: string,
  opts: PollOptions,
  successor?: TodoSpec,
): Promise<{ poll: PollResult; command: MonitorGoalCommand }> {
  const spec = state.todos[todoId]?.monitor;
  if (!spec) throw new InputError(`${todoId} is not a continuous monitor of goal ${state.goalId}`, "monitor");
  const poll = await pollMonitor(spec, tree, opts);
  return { poll, command: monitorPollCommand(state, todoId, operationId, now, poll, successor) };
}
