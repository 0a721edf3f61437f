import type { LeaseOwner } from "../../core/events/loopgate-event.js";
import { ConcurrencyError } from "../../core/kernel/errors.js";
import { type Lease, type LeaseCommand, LeaseLostError } from "../../core/run/run-lease.js";
import { HELD, keepLeaseAlive, LEASE_TTL_MS, type LeaseKeeper, renewEvery } from "./lease-keeper.js";
import { ownerProcessGone } from "./lease-owner.js";
import type { RunJournal } from "./run-journal.js";

/**
 * The command that takes a run's lease for `owner` now, given the lease its log holds, for `ttlMs`
 * (a worker passes its queue lease's length, so that the run's lease and the queue's expire together).
 */
export function takeLease(
  runId: string,
  owner: LeaseOwner,
  held: Lease | null,
  ttlMs: number = LEASE_TTL_MS,
): LeaseCommand {
  return {
    type: "take_lease",
    runId,
    owner,
    now: new Date(),
    ttlMs,
    ownerGone: held !== null && ownerProcessGone(held.owner) === true,
  };
}

/**
 * Renews the journal's lease (for `ttlMs`, every third of it) with the one lease keeper until `stop()`.
 * A renewal that finds the lease taken over (refused, or another writer's event at its revision) stops
 * the keeper, aborts its signal and says so on `onLost`; the run's next append then fails on its revision.
 * A refused renewal because the run finished meanwhile is no loss.
 */
export function keepLease(
  journal: RunJournal,
  owner: LeaseOwner,
  onLost: (e: unknown) => void = () => {},
  ttlMs: number = LEASE_TTL_MS,
): LeaseKeeper {
  return keepLeaseAlive({
    everyMs: renewEvery(ttlMs),
    idle: () => journal.current.finished !== null,
    renew: async () => {
      try {
        await journal.recordLease({
          type: "renew_lease",
          runId: journal.runId,
          token: owner.token,
          now: new Date(),
          ttlMs,
        });
        return HELD;
      } catch (e) {
        if (journal.current.finished) return HELD;
        if (e instanceof LeaseLostError || e instanceof ConcurrencyError) return { held: false, why: e };
        throw e;
      }
    },
    onLost: (loss) => onLost(loss.why),
  });
}
