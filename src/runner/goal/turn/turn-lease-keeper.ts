import type { GoalEventBody } from "../../../core/events/goal/goal-events.js";
import { decideTurnLease, type TurnLease, TurnLeaseLostError } from "../../../core/goal/turn/turn-lease.js";
import type { LeaseOwner } from "../../../core/kernel/event-parts.js";
import { StoreBusyError } from "../../../store/kernel/store-errors.js";
import {
  HELD,
  keepLeaseAlive,
  type LeaseKeeper,
  renewEvery,
  TURN_LEASE_TTL_MS,
} from "../../stream/lease-keeper.js";
import { ownerProcessGone } from "../../stream/lease-owner.js";
import { NeedsRebaseError } from "../goal-store.js";
import type { GoalJournal } from "./goal-journal.js";

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
        type: "acquire",
        holder,
        owner,
        now: now(),
        ttlMs,
        ownerGone: s.lease !== null && ownerProcessGone(s.lease.owner) === true,
      },
      s.lease,
    ).map(body),
  );
}

/**
 * Renews the lease (for `ttlMs`, every third of it unless `renewMs` says otherwise) with the one lease
 * keeper until stop(). A lost lease stops it, aborts its signal and says so on `onLost`; a heartbeat that
 * found the store locked, or lost its races to other writers of the goal, is tried again at the next beat.
 */
export function keepTurnLease(
  j: GoalJournal,
  token: string,
  now: () => Date,
  onLost: (e: unknown) => void,
  ttlMs = TURN_LEASE_TTL_MS,
  renewMs = renewEvery(ttlMs),
): LeaseKeeper {
  return keepLeaseAlive({
    everyMs: renewMs,
    renew: async () => {
      try {
        await j.append((s) =>
          decideTurnLease(j.goalId, { type: "heartbeat", token, now: now(), ttlMs }, s.lease).map(body),
        );
        return HELD;
      } catch (e) {
        if (e instanceof TurnLeaseLostError) return { held: false, why: e };
        throw e;
      }
    },
    transient: (e) => e instanceof StoreBusyError || e instanceof NeedsRebaseError,
    onLost: (loss) => onLost(loss.why),
  });
}

/** Gives the lease back (nothing when this owner no longer holds it). */
export async function releaseTurnLease(j: GoalJournal, token: string, reason: string): Promise<void> {
  await j.append((s: { lease: TurnLease | null }) =>
    s.lease?.owner.token === token
      ? decideTurnLease(j.goalId, { type: "release", token, reason }, s.lease).map(body)
      : [],
  );
}
