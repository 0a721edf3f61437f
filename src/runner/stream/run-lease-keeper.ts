import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { LeaseOwner } from "../../core/events/loopgate-event.js";
import type { Lease, LeaseCommand } from "../../core/run/run-lease.js";
import type { RunJournal } from "./run-journal.js";

/** How long a lease holds without a heartbeat, and how often the owner renews it. */
export const LEASE_TTL_MS = 30_000;
export const LEASE_RENEW_MS = 10_000;

/** How often a lease of `ttlMs` is renewed: every third of it (10 s for the default 30 s). */
export function renewEvery(ttlMs: number): number {
  return ttlMs === LEASE_TTL_MS ? LEASE_RENEW_MS : Math.max(100, Math.floor(ttlMs / 3));
}

/** This process as a lease owner, with a fresh random token. */
export function thisOwner(): LeaseOwner {
  return { pid: process.pid, host: hostname(), token: randomBytes(16).toString("hex") };
}

/**
 * True when `owner` ran on this host and its process no longer exists (kill(pid, 0) says ESRCH); null
 * for an owner on another host, which only the lease's expiry can tell. EPERM means it exists.
 */
export function ownerProcessGone(owner: LeaseOwner): boolean | null {
  if (owner.host !== hostname()) return null;
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

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
 * Renews the journal's lease (for `ttlMs`, every third of it) on an unref'd timer until `stop()`. A
 * renewal that finds the lease taken over stops the timer and says so on `onLost`; the run's next
 * append then fails on its revision.
 */
export function keepLease(
  journal: RunJournal,
  owner: LeaseOwner,
  onLost: (e: unknown) => void = () => {},
  ttlMs: number = LEASE_TTL_MS,
): { stop(): void } {
  let stopped = false;
  const timer = setInterval(() => {
    if (stopped || journal.current.finished) return;
    journal
      .recordLease({
        type: "renew_lease",
        runId: journal.runId,
        token: owner.token,
        now: new Date(),
        ttlMs,
      })
      .catch((e: unknown) => {
        // A refused renewal because the run finished meanwhile is no loss; anything else is reported.
        if (journal.current.finished) return;
        clearInterval(timer);
        onLost(e);
      });
  }, renewEvery(ttlMs));
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
