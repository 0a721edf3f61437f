import type { EventData } from "../../core/events/loopgate-event.js";
import type { BuilderContext } from "../builder.js";
import type { HookReply, StopInput } from "./hook-input.js";

/**
 * What ends one attempt of an agent that keeps running between attempts: its Stop hook arrived (the
 * agent now waits for loopgate's answer), or its process ended (`R`: the builder's process result).
 */
export type Wake<R> = { kind: "stop"; input: StopInput } | { kind: "exit"; result: R };

/**
 * The Stop an agent is waiting on, shared by the agents whose Stop hook loopgate answers (Claude Code,
 * Codex). The hook handler `hold`s each Stop (the forwarder in the sandbox waits for the answer) and
 * wakes the attempt; the builder answers it on the next attempt (block, the required fix) or at wind-down
 * (allow, the verdict). A newer Stop supersedes an older unanswered one with a block; nothing here answers
 * exit 0 on its own.
 */
export class HeldStop<R> {
  private pending: ((r: HookReply) => void) | null = null;
  private queued: Wake<R> | null = null;
  private waiter: ((w: Wake<R>) => void) | null = null;

  /** True while a Stop waits for its answer. */
  get holding(): boolean {
    return this.pending !== null;
  }

  /** The next wake (one already queued, or the next to come). */
  next(): Promise<Wake<R>> {
    return new Promise((resolve) => {
      if (this.queued) {
        const q = this.queued;
        this.queued = null;
        resolve(q);
      } else this.waiter = resolve;
    });
  }

  /** Wakes the attempt that waits, or queues the wake for the next one. */
  wake(w: Wake<R>): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = null;
      waiter(w);
    } else this.queued = w;
  }

  /** The hook handler's part for a Stop: hold it until the builder answers, and wake the attempt. */
  hold(input: StopInput): Promise<HookReply> {
    // A Stop whose earlier answer nobody waits for any more (its forwarder gave up) is superseded.
    this.answer({ exit_code: 2, stdout: "", stderr: "loopgate: superseded by a newer Stop" });
    return new Promise<HookReply>((resolve) => {
      this.pending = resolve;
      this.wake({ kind: "stop", input });
    });
  }

  /** Answers the held Stop (if any). */
  answer(r: HookReply): void {
    const p = this.pending;
    this.pending = null;
    p?.(r);
  }

  /** The agent's process is gone: its hook can no longer be answered. */
  drop(): void {
    this.pending = null;
  }
}

/** What the agent is told when its Stop is blocked: the templated required fix of the failed attempt. */
export function fixMessage(ctx: Pick<BuilderContext, "attempt" | "requiredFix">): string {
  const fix = ctx.requiredFix ?? "loopgate's held-out checks did not pass.";
  return `loopgate checked your work with held-out gates and it is not done yet (attempt ${ctx.attempt - 1} failed). Required fix:\n\n${fix}\n\nFix this, then finish again.`;
}

/** The block answering a Stop that loopgate could not check (a store error, a failed recording). */
export function failedCheck(why: string): HookReply {
  return {
    exit_code: 2,
    stdout: "",
    stderr: `loopgate could not check your work (${why}), so you may not stop yet: the task is not verified.\n`,
  };
}

/** The last message at wind-down: the verdict, and that the session is over either way. */
export function verdictMessage(v: { status: string; reason: string }): string {
  return v.status === "SUCCESS"
    ? `loopgate: SUCCESS: ${v.reason}. The task is verified; you may stop.`
    : `loopgate: ${v.status}: ${v.reason}. The run is over and was not verified; stop now.`;
}

/** The fact of one answer loopgate gave a Stop (recorded in the run, origin runtime). */
export function stopAnswered(
  agent: EventData<"stop_hook_answered">["agent"],
  attempt: number,
  input: StopInput,
  reply: HookReply,
): { type: "stop_hook_answered"; data: EventData<"stop_hook_answered"> } {
  const said = reply.exit_code === 2 ? reply.stderr : reply.stdout;
  return {
    type: "stop_hook_answered",
    data: {
      attempt,
      agent,
      session_id: input.session_id.slice(0, 200),
      decision: reply.exit_code === 2 ? "block" : "allow",
      stop_hook_active: input.stop_hook_active,
      reason: said.trim().slice(0, 4000),
    },
  };
}
