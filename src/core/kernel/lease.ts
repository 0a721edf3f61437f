import type { LeaseOwner } from "./event-parts.js";

/**
 * The one lease rule every stream lease decides by (a run's lease, a goal's turn lease; see
 * docs/architecture.md "Leases"). A lease is held by an owner (pid, host, a random token only it knows)
 * until `expiresAt`; its holder renews it, anyone else takes it over once it has expired or once its
 * owner's process is gone on the taker's host. Pure: the clock and "is that process gone" are passed in.
 * Each lease keeps its own events and stored field names and reads itself into this view.
 */
export interface LeaseView {
  owner: LeaseOwner;
  /** When the lease runs out (ISO time), unless renewed. */
  expiresAt: string;
}

/** Why a lease was taken from another owner, as its `previous.reason` stores it. */
export type TakeoverReason = "expired" | "owner_gone";

/**
 * What a lease is at `now`: `none` (nobody holds it), `live`, `expired`, or `owner_gone` (still live,
 * but its owner's process is gone). `processGone` is true only when that was seen on the owner's own host
 * (null: it cannot be told from here); an expired lease is `expired` whatever its process.
 */
export type LeaseStatus = "none" | "live" | "expired" | "owner_gone";

/** Whether the lease still holds at `now`: it runs until `expiresAt`, that instant excluded. */
export function leaseLive(lease: LeaseView, now: Date): boolean {
  return Date.parse(lease.expiresAt) > now.getTime();
}

/** Until when a lease taken or renewed at `now` for `ttlMs` holds (ISO time). */
export function leaseExpiry(now: Date, ttlMs: number): string {
  return new Date(now.getTime() + ttlMs).toISOString();
}

/** Whether `token` holds the lease: only the holder renews or releases it; anyone else's changes nothing. */
export function heldBy(lease: Pick<LeaseView, "owner"> | null, token: string): boolean {
  return lease !== null && lease.owner.token === token;
}

/** See LeaseStatus. */
export function leaseStatus(lease: LeaseView | null, now: Date, processGone: boolean | null): LeaseStatus {
  if (!lease) return "none";
  if (!leaseLive(lease, now)) return "expired";
  return processGone === true ? "owner_gone" : "live";
}

/** What taking a lease does: take a free one (or one's own again), take another's over, or be refused. */
export type TakeDecision =
  | { kind: "take" }
  | { kind: "take_over"; reason: TakeoverReason }
  | { kind: "refused" };

/**
 * Whether `claimant` may take the lease at `now`. A lease nobody holds, or the claimant's own, is simply
 * taken (no takeover recorded); another owner's is taken over once expired, or while still live when the
 * claimant saw that owner's process gone (`ownerGone`) and that owner ran on the claimant's host, since
 * only there can a process be seen gone; otherwise it is refused.
 */
export function mayTake(
  lease: LeaseView | null,
  claimant: LeaseOwner,
  now: Date,
  ownerGone: boolean,
): TakeDecision {
  if (!lease || heldBy(lease, claimant.token)) return { kind: "take" };
  const sameHost = lease.owner.host === claimant.host;
  const status = leaseStatus(lease, now, ownerGone && sameHost ? true : null);
  if (status === "expired" || status === "owner_gone") return { kind: "take_over", reason: status };
  return { kind: "refused" };
}

/**
 * The new expiry when `token` renews the lease at `now` for `ttlMs`; null when the token no longer holds
 * it (taken over, released, never taken), which the caller reports as a lost lease. The holder may renew
 * even past the expiry as long as nobody took the lease over: the log, not the clock, says who holds it.
 */
export function renewal(lease: LeaseView | null, token: string, now: Date, ttlMs: number): string | null {
  return heldBy(lease, token) ? leaseExpiry(now, ttlMs) : null;
}
