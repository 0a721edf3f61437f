import { createHash } from "node:crypto";
import { InputError } from "../../core/errors.js";
import type { GoalState, MonitorSpec, TodoSpec } from "../../core/goal/index.js";
import {
  type MonitorGoalCommand,
  monitorPollCommand,
  type PollFailureKind,
} from "../../core/goal/turn/index.js";
import type { ProcessLimits } from "../../core/limits.js";
import { runSandboxed, type SandboxMode } from "../../sandbox/bubblewrap.js";
import { scrubbedEnv } from "../../sandbox/environment.js";

/**
 * A continuous monitor's poll (seed 001 §3): its argv run in the sandbox like a gate (bubblewrap, no
 * network unless asked, a clean environment, the monitor's timeout), in `tree`, which it sees read-only.
 * The observation is the sha256 of its normalized stdout. A timeout, a crash or a non-zero exit is a typed
 * poll failure: never a material change, never a hash.
 */
export interface PollOptions {
  sandbox: SandboxMode;
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

/** Runs one poll of `spec` in `tree`. Never throws for the poll's own failure; a missing bwrap throws. */
export async function pollMonitor(spec: MonitorSpec, tree: string, opts: PollOptions): Promise<PollResult> {
  const timeoutMs = spec.timeout_seconds * 1000;
  const r = await runSandboxed(
    {
      argv: spec.argv,
      cwd: tree,
      writable: [],
      readonly: [tree],
      env: scrubbedEnv({ home: "/tmp", extra: { ...opts.env } }),
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
  now: string,
  tree: string,
  opts: PollOptions,
  successor?: TodoSpec,
): Promise<{ poll: PollResult; command: MonitorGoalCommand }> {
  const spec = state.todos[todoId]?.monitor;
  if (!spec) throw new InputError(`${todoId} is not a continuous monitor of goal ${state.goalId}`, "monitor");
  const poll = await pollMonitor(spec, tree, opts);
  return { poll, command: monitorPollCommand(state, todoId, operationId, now, poll, successor) };
}
