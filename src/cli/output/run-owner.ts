import type { LoopgateEvent } from "../../core/events/loopgate-event.js";
import { leaseOf, ownerView } from "../../core/run/run-lease.js";
import { ownerProcessGone } from "../../runner/stream/lease-owner.js";
import { shellWord } from "./store-location.js";

/** What `loopgate status` adds about an unfinished run's owner (JSON `owner`, and one line for people). */
export interface OwnerReport {
  owner: {
    pid: number | null;
    host: string | null;
    alive: boolean | null;
    lease_expires_at: string | null;
    why: string;
  };
  hint: string;
  line: string;
}

/** Why a `loopgate claude` run cannot be resumed, and what to do instead (status, resume, the verdict). */
export const CLAUDE_NOT_RESUMABLE =
  "a loopgate claude run cannot be resumed (its Claude Code session ended with the process that ran it)";

/** The command that runs a `loopgate claude` run's task again, from the run's `resume` hint. */
export function claudeRerun(resume: string, taskPath: string): string {
  return resume.replace(/\bresume \S+/, `claude ${shellWord(taskPath)}`);
}

/** Whether the process that drives an unfinished run is still there, and what to do if it is not. */
export function ownerReport(
  events: readonly LoopgateEvent[],
  /** The command that continues the run, as printed (`npx loopgate resume RUN_ID …`). */
  resume: string,
  now: Date = new Date(),
): OwnerReport {
  const lease = leaseOf(events);
  const view = ownerView(lease, now, lease ? ownerProcessGone(lease.owner) : null);
  const who = lease ? `process ${lease.owner.pid} on host ${lease.owner.host}` : "no owner recorded";
  // A loopgate claude run whose owner is gone is run again, never resumed (resume refuses it).
  const started = events[0]?.type === "run_started" ? events[0].data : null;
  const next =
    started?.builder.kind === "claude-code"
      ? `${CLAUDE_NOT_RESUMABLE}; run its task again: ${claudeRerun(resume, started.task_path)}`
      : `continue it with: ${resume}`;
  const hint =
    view.alive === true
      ? `it is being driven; its lease runs until ${lease?.expiresAt}`
      : view.alive === false
        ? `its owner is gone (${view.why}); ${next}`
        : `no owner recorded (a run from an older loopgate); if no process drives it, ${next}`;
  return {
    owner: {
      pid: lease?.owner.pid ?? null,
      host: lease?.owner.host ?? null,
      alive: view.alive,
      lease_expires_at: lease?.expiresAt ?? null,
      why: view.why,
    },
    hint,
    line: `owner: ${who}, ${view.alive === true ? "alive" : view.alive === false ? "gone" : "unknown"} · ${hint}`,
  };
}
