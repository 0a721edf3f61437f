import { LoopgateError } from "../../kernel/errors.js";
import type { LeaseOwner } from "../../kernel/event-parts.js";

/**
 * The goal's turn lease (one governed turn at a time per goal): whoever appends `turn_lease_acquired`
 * with the goal stream's expected revision holds it until `expires_at`, renewed by heartbeats. Pure: the
 * clock and "is that process gone" are passed in, so the same rules serve SQLite and Postgres.
 */
export interface TurnLease {
  holder: string;
  owner: LeaseOwner;
  expires_at: string;
}

export type TurnLeaseEvent =
  | {
      type: "turn_lease_acquired";
      data: {
        holder: string;
        owner: LeaseOwner;
        expires_at: string;
        previous: (TurnLease & { reason: "expired" | "owner_gone" }) | null;
      };
    }
  | { type: "turn_lease_heartbeat"; data: { token: string; expires_at: string } }
  | { type: "turn_lease_released"; data: { token: string; reason: string } };

export type TurnLeaseCommand =
  | {
      kind: "acquire";
      holder: string;
      owner: LeaseOwner;
      now: string;
      ttl_ms: number;
      /** The caller saw the holder's process gone on its own host. */
      owner_gone: boolean;
    }
  | { kind: "heartbeat"; token: string; now: string; ttl_ms: number }
  | { kind: "release"; token: string; reason: string };

/** Another live turn holds the goal: `goal tick` answers `busy`. */
export class TurnLeaseHeldError extends LoopgateError {
  readonly lease: TurnLease;
  constructor(goalId: string, lease: TurnLease) {
    super(
      "turn_lease_held",
      `turn in progress by ${lease.holder} (process ${lease.owner.pid} on ${lease.owner.host}) until ${lease.expires_at}; goal ${goalId} runs one turn at a time`,
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

export function leaseLiveAt(lease: TurnLease, now: string): boolean {
  return Date.parse(lease.expires_at) > Date.parse(now);
}

export function evolveTurnLease(lease: TurnLease | null, e: TurnLeaseEvent): TurnLease | null {
  switch (e.type) {
    case "turn_lease_acquired":
      return { holder: e.data.holder, owner: e.data.owner, expires_at: e.data.expires_at };
    case "turn_lease_heartbeat":
      return lease && lease.owner.token === e.data.token
        ? { ...lease, expires_at: e.data.expires_at }
        : lease;
    case "turn_lease_released":
      return lease && lease.owner.token === e.data.token ? null : lease;
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
  if (cmd.kind === "release") {
    if (!lease || lease.owner.token !== cmd.token) throw new TurnLeaseLostError(goalId, lease);
    return [{ type: "turn_lease_released", data: { token: cmd.token, reason: cmd.reason } }];
  }
  const expires_at = new Date(Date.parse(cmd.now) + cmd.ttl_ms).toISOString();
  if (cmd.kind === "heartbeat") {
    if (!lease || lease.owner.token !== cmd.token) throw new TurnLeaseLostError(goalId, lease);
    return [{ type: "turn_lease_heartbeat", data: { token: cmd.token, expires_at } }];
  }
  let previous: (TurnLease & { reason: "expired" | "owner_gone" }) | null = null;
  if (lease && lease.owner.token !== cmd.owner.token) {
    const live = leaseLiveAt(lease, cmd.now);
    const gone = cmd.owner_gone && lease.owner.host === cmd.owner.host;
    if (live && !gone) throw new TurnLeaseHeldError(goalId, lease);
    previous = { ...lease, reason: live ? "owner_gone" : "expired" };
  }
  return [
    { type: "turn_lease_acquired", data: { holder: cmd.holder, owner: cmd.owner, expires_at, previous } },
  ];
}
