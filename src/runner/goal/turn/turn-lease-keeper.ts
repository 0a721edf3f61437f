import type { GoalEventBody } from "../../../core/events/goal/goal-events.js";
import { decideTurnLease, type TurnLease } from "../../../core/goal/turn/turn-lease.js";
import type { LeaseOwner } from "../../../core/kernel/event-parts.js";
import { ownerProcessGone } from "../../stream/run-lease-keeper.js";
import type { GoalJournal } from "./goal-journal.js";

/** How long a turn lease holds without a heartbeat, and how often its holder renews it. */
export const TURN_LEASE_TTL_MS = 60_000;
export const TURN_LEASE_RENEW_MS = 20_000;

const body = (e: unknown) => e as GoalEventBody;

/**
 * Takes the goal's turn lease for `holder` (TurnLeaseHeldError while another live owner holds it; a
 * holder whose process is gone on this host, or whose lease expired, is taken over).
 */
export async function acquireTurnLease(
  j: GoalJournal,
  holder: string,
  owner: LeaseOwner,
  now: () => Date,
  ttlMs = TURN_LEASE_TTL_MS,
): Promise<void> {
  await j.append((s) =>
    decideTurnLease(
      j.goalId,
      {
        kind: "acquire",
        holder,
        owner,
        now: now().toISOString(),
        ttl_ms: ttlMs,
        owner_gone: s.lease !== null && ownerProcessGone(s.lease.owner) === true,
      },
      s.lease,
    ).map(body),
  );
}

/** Renews the lease on an unref'd timer until stop(); a lost lease stops the timer and says so. */
export function keepTurnLease(
  j: GoalJournal,
  token: string,
  now: () => Date,
  onLost: (e: unknown) => void,
  ttlMs = TURN_LEASE_TTL_MS,
  renewMs = TURN_LEASE_RENEW_MS,
): { stop(): void } {
  const timer = setInterval(() => {
    j.append((s) =>
      decideTurnLease(
        j.goalId,
        { kind: "heartbeat", token, now: now().toISOString(), ttl_ms: ttlMs },
        s.lease,
      ).map(body),
    ).catch((e: unknown) => {
      clearInterval(timer);
      onLost(e);
    });
  }, renewMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Gives the lease back (nothing when this owner no longer holds it). */
export async function releaseTurnLease(j: GoalJournal, token: string, reason: string): Promise<void> {
  await j.append((s: { lease: TurnLease | null }) =>
    s.lease?.owner.token === token
      ? decideTurnLease(j.goalId, { kind: "release", token, reason }, s.lease).map(body)
      : [],
  );
}
