import type { TurnLeaseEvent } from "../../events/goal/turn-events.js";
import { LoopgateError } from "../../kernel/errors.js";
import type { LeaseOwner } from "../../kernel/event-parts.js";
import { heldBy, type LeaseView, leaseExpiry, mayTake, renewal } from "../../kernel/lease.js";

/**
 * The goal's turn lease (one governed turn at a time per goal): whoever appends `turn_lease_acquired`
 * with the goal stream's expected revision holds it until `expires_at`, renewed by heartbeats. Decided by
 * the one lease rule (core/kernel/lease.ts); pure: the clock and "is that process gone" are passed in, so
 * the same rules serve SQLite and Postgres.
 */
export interface TurnLease extends LeaseView {
  holder: string;
}

/** The lease's facts: declared once in the goal area, their type inferred from the schemas. */
export type { TurnLeaseEvent };

export type TurnLeaseCommand =
  | {
      type: "acquire";
      holder: string;
      owner: LeaseOwner;
      now: Date;
      ttlMs: number;
      /** The caller saw the holder's process gone on its own host. */
      ownerGone: boolean;
    }
  | { type: "heartbeat"; token: string; now: Date; ttlMs: number }
  | { type: "release"; token: string; reason: string };

/** Another live turn holds the goal: `goal tick` answers `busy`. */
export class TurnLeaseHeldError extends LoopgateError {
  readonly lease: TurnLease;
  constructor(goalId: string, lease: TurnLease) {
    super(
      "turn_lease_held",
      `turn in progress by ${lease.holder} (process ${lease.owner.pid} on ${lease.owner.host}) until ${lease.expiresAt}; goal ${goalId} runs one turn at a time`,
    );
    this.lease = lease;
  }
}

/** This process no longer holds the goal's turn lease (it expired and was taken over, or was released). */
export class TurnLeaseLostError extends LoopgateError {
  constructor(goalId: string, lease: TurnLease | null) {
    super(
      "turn_lease_lost",
      `goal ${goalId}: this process no longer holds the turn lease${lease ? ` (${lease.holder}, process ${lease.owner.pid} on ${lease.owner.host}, holds it)` : ""}`,
    );
  }
}

export function evolveTurnLease(lease: TurnLease | null, e: TurnLeaseEvent): TurnLease | null {
  switch (e.type) {
    case "turn_lease_acquired":
      return { holder: e.data.holder, owner: e.data.owner, expiresAt: e.data.expires_at };
    case "turn_lease_heartbeat":
      return lease && heldBy(lease, e.data.token) ? { ...lease, expiresAt: e.data.expires_at } : lease;
    case "turn_lease_released":
      return heldBy(lease, e.data.token) ? null : lease;
  }
}

/**
 * The lease events for a command. Acquiring a lease another owner holds is refused while it is live,
 * unless that owner is on the caller's host and its process is gone; a heartbeat or release by anyone
 * but the holder is refused.
 */
export function decideTurnLease(
  goalId: string,
  cmd: TurnLeaseCommand,
  lease: TurnLease | null,
): TurnLeaseEvent[] {
  if (cmd.type === "release") {
    if (!heldBy(lease, cmd.token)) throw new TurnLeaseLostError(goalId, lease);
    return [{ type: "turn_lease_released", data: { token: cmd.token, reason: cmd.reason } }];
  }
  const { now } = cmd;
  if (cmd.type === "heartbeat") {
    const expires_at = renewal(lease, cmd.token, now, cmd.ttlMs);
    if (expires_at === null) throw new TurnLeaseLostError(goalId, lease);
    return [{ type: "turn_lease_heartbeat", data: { token: cmd.token, expires_at } }];
  }
  const take = mayTake(lease, cmd.owner, now, cmd.ownerGone);
  if (take.kind === "refused" && lease) throw new TurnLeaseHeldError(goalId, lease);
  const previous =
    take.kind === "take_over" && lease
      ? { holder: lease.holder, owner: lease.owner, expires_at: lease.expiresAt, reason: take.reason }
      : null;
  const expires_at = leaseExpiry(now, cmd.ttlMs);
  return [
    { type: "turn_lease_acquired", data: { holder: cmd.holder, owner: cmd.owner, expires_at, previous } },
  ];
}
