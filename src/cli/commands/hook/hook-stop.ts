import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { noopBuilder } from "../../../builders/command-builder.js";
import {
  type HookReply,
  parseHookInput,
  type StopInput,
  sessionStream,
  toolFact,
} from "../../../builders/stop-gate/hook-input.js";
import type { EventData, LoopgateEvent } from "../../../core/events/loopgate-event.js";
import { boundText, LIMITS } from "../../../core/kernel/bounded.js";
import { buildRequiredFix, type Feedback } from "../../../core/run/required-fix.js";
import { runTask } from "../../../runner/run/run-task.js";
import { type LoadedTask, loadTask } from "../../../runner/task-source/load-task.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import { openStore, storeFrom } from "../../output/context.js";
import { CLAUDE_BLOCK_CAP } from "../claude.js";
import { localGoalAtStop } from "./hook-task.js";

/** What the Stop hook of a user's own session decides from one verification of the work. */
export interface LocalStop {
  status: string;
  reason: string;
  runId: string;
  fix: string;
  /** Stops this hook already blocked in a row in this session (0 on a fresh user turn). */
  blocks: number;
  /** loopgate's own cap on blocks in a row; below Claude Code's (8). */
  cap: number;
}

/**
 * The answer to a Stop: SUCCESS lets Claude stop; otherwise it is blocked (exit 2, the required fix on
 * stderr) until loopgate's own cap is reached, which lets it stop with a message that the work is NOT
 * verified (ESCALATED) rather than leave the ending to Claude Code's block cap. Pure.
 */
export function localStopReply(s: LocalStop): { reply: HookReply; blocks: number } {
  if (s.status === "SUCCESS")
    return {
      reply: { exit_code: 0, stdout: json(`loopgate: SUCCESS (run ${s.runId}): ${s.reason}`), stderr: "" },
      blocks: 0,
    };
  if (s.blocks + 1 >= s.cap)
    return {
      reply: {
        exit_code: 0,
        stdout: json(
          `loopgate: ESCALATED (run ${s.runId}): the work is NOT verified after ${s.blocks + 1} checks (loopgate's cap ${s.cap}); last: ${s.reason}`,
        ),
        stderr: "",
      },
      blocks: 0,
    };
  return {
    reply: {
      exit_code: 2,
      stdout: "",
      stderr: `loopgate checked your work with held-out gates (run ${s.runId}) and it is not done yet. Required fix:\n\n${s.fix}\n\nFix this, then finish again.\n`,
    },
    blocks: s.blocks + 1,
  };
}

const json = (systemMessage: string) => `${JSON.stringify({ systemMessage })}\n`;

/** Blocks with `why`: a hook that cannot check never lets the agent stop. */
export const blockFor = (why: string): HookReply => ({
  exit_code: 2,
  stdout: "",
  stderr: `loopgate could not check your work (${why}), so you may not stop yet: the task is not verified.\n`,
});

const sessionFile = (localDir: string, id: string) =>
  join(localDir, "claude-sessions", `${id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 100) || "unknown"}.json`);

function readBlocks(file: string, input: StopInput): number {
  if (!input.stop_hook_active) return 0;
  try {
    const n = (JSON.parse(readFileSync(file, "utf8")) as { blocks?: unknown }).blocks;
    return typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : 0;
  } catch {
    return 0;
  }
}

const runtimeFact = (type: LoopgateEvent["type"], data: unknown): LoopgateEvent =>
  ({
    id: randomUUID(),
    type,
    data,
    meta: { at: new Date().toISOString(), origin: "runtime" },
  }) as LoopgateEvent;

/**
 * The binding of this session to the task the hooks check it with (and its folder), when the session's
 * stream does not hold that binding yet: what `loopgate runs` needs to name the `loopgate verify` of a
 * session whose end was never verified. Empty when the latest binding already says the same.
 */
export async function bindingFor(
  store: EventStore,
  input: { session_id: string; cwd?: string | undefined },
  loaded: LoadedTask,
): Promise<LoopgateEvent[]> {
  const data: EventData<"hook_session_bound"> = {
    agent: "claude-code",
    session_id: input.session_id,
    task_id: loaded.task.id,
    task_file: resolve(loaded.file),
    cwd: resolve(input.cwd ?? process.cwd()),
  };
  const events = await store.readStream(sessionStream(input.session_id));
  const bound = events.findLast((e) => e.type === "hook_session_bound");
  const same =
    bound?.type === "hook_session_bound" &&
    bound.data.task_file === data.task_file &&
    bound.data.cwd === data.cwd &&
    bound.data.task_id === data.task_id;
  return same ? [] : [runtimeFact("hook_session_bound", data)];
}

/**
 * `loopgate hook stop TASK` in a user's own Claude Code session: verifies the session's working folder
 * as `loopgate verify` does (a recorded run: pristine + deliverables − protected + held-out, in its own
 * sandbox), then answers. Every failure is a block with the reason, never an open door.
 */
export async function localStop(
  stdin: string,
  taskPath: string,
  storeFlag: string | undefined,
): Promise<HookReply> {
  const parsed = parseHookInput(stdin);
  if ("error" in parsed) return blockFor(parsed.error);
  const input = parsed.input;
  if (input.hook_event_name !== "Stop") return blockFor(`expected a Stop hook, got ${input.hook_event_name}`);
  const loaded = loadTask(taskPath);
  const where = storeFrom(storeFlag);
  // A store inside the folder it verifies would be copied into its own run and reachable by the agent:
  // a folder store there is refused; beside a PostgreSQL log (whose local folder is ./.loopgate of the
  // session, where Claude Code runs its hooks) the run folders go beside the task file instead.
  const work = resolve(input.cwd ?? process.cwd());
  const within = (dir: string) => {
    const rel = relative(work, dir);
    return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
  };
  const localDir = where.kind === "postgres" && within(where.dir) ? join(loaded.dir, ".loopgate") : where.dir;
  if (within(localDir))
    return blockFor(
      `its store ${localDir} lies inside the session's folder ${work}; install the hooks again with --store DIR outside it`,
    );
  const store = await openStore(where, true);
  try {
    const bind = await bindingFor(store, input, loaded);
    if (bind.length) await store.append(sessionStream(input.session_id), bind, "any");
    const file = sessionFile(localDir, input.session_id);
    const cap = Math.min(loaded.task.budget.attempts, CLAUDE_BLOCK_CAP);
    const before = readBlocks(file, input);
    // The goal's command and file predicates first, over the session's recorded calls: one block fewer
    // than loopgate's cap may go to them, so the held-out gates always get the last word.
    const goal = await localGoalAtStop(store, loaded.task.goal?.all ?? [], {
      sessionId: input.session_id,
      cwd: resolve(input.cwd ?? process.cwd()),
      blocksLeft: cap - 1 - before - 1,
    });
    if (goal) {
      mkdirSync(join(localDir, "claude-sessions"), { recursive: true, mode: 0o700 });
      writeFileSync(file, `${JSON.stringify({ blocks: before + 1, last_run: null })}\n`);
      return goal;
    }
    const env = await runTask({
      loaded,
      builder: noopBuilder(),
      store,
      localDir,
      sandbox: "bubblewrap",
      workFrom: resolve(input.cwd ?? process.cwd()),
    });
    const events = await store.readStream(`run-${env.run_id}`);
    const gates = events.flatMap((e) => (e.type === "gate_run_finished" ? [e.data] : []));
    const findings = events.flatMap((e) => (e.type === "finding_recorded" ? [e.data] : []));
    const feedback: Record<string, Feedback> = Object.fromEntries(
      loaded.task.gates.map((g) => [g.id, g.feedback as Feedback]),
    );
    const fix = buildRequiredFix({
      attempt: 1,
      gates: gates as EventData<"gate_run_finished">[],
      feedback,
      findings,
      deliverables: loaded.task.deliverables,
    });
    const { reply, blocks } = localStopReply({
      status: env.status,
      reason: env.reason,
      runId: env.run_id,
      fix,
      blocks: before,
      cap,
    });
    // The fact that this Stop was verified, in the session's own stream: a session whose last tool call
    // comes after its last such fact ended unverified (core/agent/hook-session-state.ts).
    await store.append(
      sessionStream(input.session_id),
      [
        runtimeFact("hook_stop_verified", {
          agent: "claude-code",
          session_id: input.session_id,
          run_id: env.run_id,
          status: env.status,
          reason: boundText(env.reason, LIMITS.reason),
          decision: reply.exit_code === 2 ? "block" : "allow",
        } satisfies EventData<"hook_stop_verified">),
      ],
      "any",
    );
    mkdirSync(join(localDir, "claude-sessions"), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify({ blocks, last_run: env.run_id })}\n`);
    return reply;
  } finally {
    await store.close();
  }
}

/**
 * `loopgate hook post-tool TASK`: appends the tool call Claude Code reported to the session's own stream
 * (`claude-session-<id>` in the task's store), origin agent_runtime.
 */
export async function localPostTool(
  stdin: string,
  taskPath: string,
  storeFlag: string | undefined,
): Promise<HookReply> {
  const parsed = parseHookInput(stdin);
  if ("error" in parsed) return { exit_code: 1, stdout: "", stderr: `loopgate: ${parsed.error}\n` };
  const input = parsed.input;
  if (input.hook_event_name !== "PostToolUse" && input.hook_event_name !== "PostToolUseFailure")
    return { exit_code: 0, stdout: "", stderr: "" };
  const loaded = loadTask(taskPath);
  const store = await openStore(storeFrom(storeFlag), true);
  try {
    const stream = sessionStream(input.session_id);
    const data = toolFact(input, 1);
    await store.append(
      stream,
      [
        ...(await bindingFor(store, input, loaded)),
        {
          id: randomUUID(),
          type: "agent_tool_observed",
          data,
          meta: { at: new Date().toISOString(), origin: "agent_runtime" },
        },
      ],
      "any",
    );
    return { exit_code: 0, stdout: "", stderr: "" };
  } finally {
    await store.close();
  }
}
