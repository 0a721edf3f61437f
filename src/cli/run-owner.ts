import type { LoopgateEvent } from "../core/events.js";
import { leaseOf, ownerView } from "../core/run-lease.js";
import { ownerProcessGone } from "../runner/run-lease-keeper.js";

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
  const hint =
    view.alive === true
      ? `it is being driven; its lease runs until ${lease?.expiresAt}`
      : view.alive === false
        ? `its owner is gone (${view.why}); continue it with: ${resume}`
        : `no owner recorded (a run from an older loopgate); if no process drives it, continue it with: ${resume}`;
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
