import type { EventData, LeaseOwner, LoopgateEvent } from "../events/loopgate-event.js";
import { LoopgateError } from "../kernel/errors.js";
import { heldBy, type LeaseView, leaseExpiry, leaseStatus, mayTake, renewal } from "../kernel/lease.js";

/**
 * The run's lease: the right to drive a run for a while. Whoever appends `run_lease_taken` (with the
 * stream's expected revision) holds it until `expires_at`, renewed by `run_lease_renewed`. Decided by the
 * one lease rule (core/kernel/lease.ts); pure: the clock and the "is that process gone" fact are passed
 * in, so the same rules serve SQLite and Postgres.
 */
export interface Lease extends LeaseView {
  /** When it was taken or last renewed (the event's `meta.at`). */
  renewedAt: string;
}

/** The lease events, declared in events.ts; projections that show what a run did skip these. */
export const leaseEventTypes = ["run_lease_taken", "run_lease_renewed"] as const;

/** True for the events that say who drives a run rather than what it did. */
export function isLeaseEvent(e: { type: string }): boolean {
  return (leaseEventTypes as readonly string[]).includes(e.type);
}

/** Folds one event into the lease. A renewal by anyone but the holder changes nothing. */
export function evolveLease(lease: Lease | null, event: LoopgateEvent): Lease | null {
  switch (event.type) {
    case "run_lease_taken":
      return { owner: event.data.owner, expiresAt: event.data.expires_at, renewedAt: event.meta.at };
    case "run_lease_renewed":
      if (!lease || !heldBy(lease, event.data.token)) return lease;
      return { ...lease, expiresAt: event.data.expires_at, renewedAt: event.meta.at };
    default:
      return lease;
  }
}

/** The lease a run's log says is held (live or not); null when no process ever took one. */
export function leaseOf(events: readonly LoopgateEvent[]): Lease | null {
  return events.reduce(evolveLease, null as Lease | null);
}

/** The lease is held by another live owner: the run is being driven, so it must not be resumed. */
export class LeaseHeldError extends LoopgateError {
  readonly lease: Lease;
  constructor(runId: string, lease: Lease) {
    super(
      "run_lease_held",
      `run ${runId} is being driven by process ${lease.owner.pid} on host ${lease.owner.host} ` +
        `(its lease runs until ${lease.expiresAt}, renewed at ${lease.renewedAt}); nothing was changed. ` +
        `Wait for it to finish (\`loopgate status ${runId}\`), or stop that process and resume then`,
    );
    this.lease = lease;
  }
}

/** The lease was taken over by another process: this one must stop driving the run. */
export class LeaseLostError extends LoopgateError {
  constructor(runId: string, holder: Lease | null) {
    super(
      "run_lease_lost",
      `run ${runId}: this process no longer holds the run's lease${holder ? ` (process ${holder.owner.pid} on host ${holder.owner.host} took it over)` : ""}; it stops driving the run`,
    );
  }
}

/** What a process asks of the lease. `ownerGone`: the caller saw the holder's process gone on its host. */
export type LeaseCommand =
  | { type: "take_lease"; runId: string; owner: LeaseOwner; now: Date; ttlMs: number; ownerGone: boolean }
  | { type: "renew_lease"; runId: string; token: string; now: Date; ttlMs: number };

/** A lease event as the journal appends it. */
export type LeaseEventBody =
  | { type: "run_lease_taken"; data: EventData<"run_lease_taken"> }
  | { type: "run_lease_renewed"; data: EventData<"run_lease_renewed"> };

/**
 * Decides the lease events for a command. Taking a lease held by another owner is refused while it is
 * live, unless that owner is on the caller's host and its process is gone; renewing is refused to anyone
 * who no longer holds it.
 */
export function decideLease(command: LeaseCommand, lease: Lease | null): LeaseEventBody[] {
  if (command.type === "renew_lease") {
    const expires = renewal(lease, command.token, command.now, command.ttlMs);
    if (expires === null) throw new LeaseLostError(command.runId, lease);
    return [{ type: "run_lease_renewed", data: { token: command.token, expires_at: expires } }];
  }
  const take = mayTake(lease, command.owner, command.now, command.ownerGone);
  if (take.kind === "refused" && lease) throw new LeaseHeldError(command.runId, lease);
  const previous: EventData<"run_lease_taken">["previous"] =
    take.kind === "take_over" && lease
      ? { ...lease.owner, expires_at: lease.expiresAt, reason: take.reason }
      : null;
  const expires = leaseExpiry(command.now, command.ttlMs);
  return [{ type: "run_lease_taken", data: { owner: command.owner, expires_at: expires, previous } }];
}

/** What `status` says about an unfinished run's owner; `alive` is null when it cannot be told from here. */
export interface OwnerView {
  lease: Lease | null;
  alive: boolean | null;
  /** Why: "lease live", "lease expired", "process gone", "no lease recorded". */
  why: string;
}

/**
 * Whether an unfinished run's owner is still driving it at `now`. `processGone` answers for owners on
 * this host (null: another host, which only the lease's expiry can tell).
 */
export function ownerView(lease: Lease | null, now: Date, processGone: boolean | null): OwnerView {
  switch (leaseStatus(lease, now, processGone)) {
    case "none":
      return { lease, alive: null, why: "no lease recorded" };
    case "expired":
      return { lease, alive: false, why: "lease expired" };
    case "owner_gone":
      return { lease, alive: false, why: "process gone" };
    case "live":
      return { lease, alive: true, why: "lease live" };
  }
}
