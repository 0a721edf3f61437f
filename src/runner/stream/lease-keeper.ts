import { StoreBusyError } from "../../store/kernel/store-errors.js";

/** How long a run's lease holds without a renewal (a worker passes its claim's length instead). */
export const LEASE_TTL_MS = 30_000;
/** How long a goal's turn lease holds without a renewal. */
export const TURN_LEASE_TTL_MS = 60_000;

/**
 * A lease is renewed this many times per length (every third of it: 10 s for a run's 30 s, 20 s for a
 * turn's 60 s, 10 s for a worker's default 30 s claim), so renewals may fail this many times less one in a
 * row while the lease still holds.
 */
export const RENEWALS_PER_TTL = 3;
/** The shortest renewal interval: a very short lease (a test's) must not turn the heartbeat into a busy loop. */
export const MIN_RENEW_MS = 100;

/** How often a lease of `ttlMs` is renewed: every third of it, never more often than every `floorMs`. */
export function renewEvery(ttlMs: number, floorMs: number = MIN_RENEW_MS): number {
  return Math.max(floorMs, Math.floor(ttlMs / RENEWALS_PER_TTL));
}

/**
 * Transient renewal failures in a row that are retried at the next beat: as many as leave the lease still
 * holding (the renewal after them would come when it has run out). One more is a loss.
 */
export const TRANSIENT_FAILURES = RENEWALS_PER_TTL - 1;

/** What one renewal found: the lease still held, or lost (`why`: the error or reason to report). */
export type Renewal = { held: true } | { held: false; why: unknown };

/** The renewal found the lease still held. */
export const HELD: Renewal = { held: true };

/**
 * Why a keeper stopped on its own: `lost` (a renewal found the lease no longer this owner's) or `failed`
 * (renewing threw an error that is not transient, or transient ones past TRANSIENT_FAILURES in a row).
 */
export interface LeaseLoss {
  kind: "lost" | "failed";
  why: unknown;
}

export interface LeaseKeeperOptions {
  /** Renews the lease once; resolves to held or lost, rejects on an error. */
  renew: () => Promise<Renewal>;
  /** How often (see renewEvery). */
  everyMs: number;
  /** Told once when the lease is lost; the keeper's signal is aborted with `loss.why` just before. */
  onLost: (loss: LeaseLoss) => void;
  /** Which renewal errors are retried at the next beat (default: the store stayed locked, StoreBusyError). */
  transient?: (e: unknown) => boolean;
  /** While true, beats renew nothing (a run already finished has no lease to keep). */
  idle?: () => boolean;
}

/** A running keeper: its signal is aborted (with the loss's reason) when the lease is lost. */
export interface LeaseKeeper {
  readonly signal: AbortSignal;
  /** Stops renewing: the owner is done with the lease; nothing is reported after it. */
  stop(): void;
}

const storeBusy = (e: unknown) => e instanceof StoreBusyError;

/**
 * The one heartbeat loop of every lease (a run's, a goal's turn, a worker's claim on a queued job): renews
 * every `everyMs` on an unref'd timer until `stop()`. It never stops silently: a lost lease, a failing
 * renewal (a transient error retried TRANSIENT_FAILURES times in a row first) aborts its signal with the
 * reason and tells `onLost`, once. A beat that comes while the previous renewal is still under way is
 * skipped, so renewals never pile up on a slow store.
 */
export function keepLeaseAlive(o: LeaseKeeperOptions): LeaseKeeper {
  const controller = new AbortController();
  const transient = o.transient ?? storeBusy;
  let stopped = false;
  let renewing = false;
  let failures = 0;
  const end = (loss: LeaseLoss) => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    controller.abort(loss.why);
    o.onLost(loss);
  };
  const beat = () => {
    if (stopped || renewing || o.idle?.()) return;
    renewing = true;
    Promise.resolve()
      .then(o.renew)
      .then(
        (r) => {
          if (r.held) failures = 0;
          else end({ kind: "lost", why: r.why });
        },
        (e: unknown) => {
          failures++;
          if (!transient(e) || failures > TRANSIENT_FAILURES) end({ kind: "failed", why: e });
        },
      )
      .finally(() => {
        renewing = false;
      });
  };
  const timer = setInterval(beat, o.everyMs);
  timer.unref();
  return {
    signal: controller.signal,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
