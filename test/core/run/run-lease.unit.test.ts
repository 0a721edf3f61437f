import { describe, expect, it } from "vitest";
import type { LeaseOwner, LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import {
  decideLease,
  type LeaseCommand,
  LeaseHeldError,
  LeaseLostError,
  leaseOf,
  ownerView,
} from "../../../src/core/run/run-lease.js";

const A: LeaseOwner = { pid: 100, host: "box", token: "tok-a" };
const B: LeaseOwner = { pid: 200, host: "box", token: "tok-b" };
const FAR: LeaseOwner = { pid: 300, host: "elsewhere", token: "tok-c" };
const T0 = new Date("2026-01-01T00:00:00.000Z");
const at = (s: number) => new Date(T0.getTime() + s * 1000);

/** Given these lease commands applied in order (each at its own time), the events a log would hold. */
function given(...commands: LeaseCommand[]): LoopgateEvent[] {
  const events: LoopgateEvent[] = [];
  for (const c of commands)
    for (const b of decideLease(c, leaseOf(events)))
      events.push({
        ...b,
        id: `e${events.length}`,
        meta: { at: c.now.toISOString(), origin: "runtime" },
      } as LoopgateEvent);
  return events;
}
const take = (owner: LeaseOwner, s: number, ownerGone = false): LeaseCommand => ({
  type: "take_lease",
  runId: "r1",
  owner,
  now: at(s),
  ttlMs: 30_000,
  ownerGone,
});
const renew = (owner: LeaseOwner, s: number): LeaseCommand => ({
  type: "renew_lease",
  runId: "r1",
  token: owner.token,
  now: at(s),
  ttlMs: 30_000,
});

describe("the run lease", () => {
  it("a first take needs no previous owner; the lease runs ttl from now", () => {
    const [e] = given(take(A, 0));
    expect(e?.type).toBe("run_lease_taken");
    expect(e?.data).toEqual({ owner: A, expires_at: at(30).toISOString(), previous: null });
  });

  it("a renewal by the holder moves the expiry; the lease is held by whoever took it last", () => {
    const events = given(take(A, 0), renew(A, 10), renew(A, 20));
    expect(leaseOf(events)).toEqual({
      owner: A,
      expiresAt: at(50).toISOString(),
      renewedAt: at(20).toISOString(),
    });
  });

  it("a live lease of another owner is refused, naming its pid, host and expiry", () => {
    const events = given(take(A, 0), renew(A, 10));
    const attempt = () => decideLease(take(B, 25), leaseOf(events));
    expect(attempt).toThrow(LeaseHeldError);
    expect(attempt).toThrow(/process 100 on host box .*until 2026-01-01T00:00:40.000Z/);
  });

  it("an expired lease is taken over, recording whose and why", () => {
    const events = given(take(A, 0), renew(A, 10), take(B, 41));
    expect(leaseOf(events)?.owner).toEqual(B);
    expect(events.at(-1)?.data).toMatchObject({
      previous: { ...A, expires_at: at(40).toISOString(), reason: "expired" },
    });
  });

  it("a live lease whose process is gone on the same host is taken over at once", () => {
    const events = given(take(A, 0), take(B, 5, true));
    expect(events.at(-1)?.data).toMatchObject({ previous: { pid: 100, reason: "owner_gone" } });
  });

  it("'the process is gone' counts only for an owner on the caller's host", () => {
    const events = given(take(A, 0));
    expect(() => decideLease(take(FAR, 5, true), leaseOf(events))).toThrow(LeaseHeldError);
  });

  it("after a takeover the old owner can no longer renew, and its renewals never move the new lease", () => {
    const events = given(take(A, 0), take(B, 31));
    expect(() => decideLease(renew(A, 32), leaseOf(events))).toThrow(LeaseLostError);
    expect(() => decideLease(renew(A, 32), null)).toThrow(LeaseLostError);
  });

  it("the same owner may take its own lease again (no takeover recorded)", () => {
    const events = given(take(A, 0), take(A, 5));
    expect(events.at(-1)?.data).toMatchObject({ previous: null });
  });

  it("status: live, expired, process gone, or no lease recorded", () => {
    const lease = leaseOf(given(take(A, 0)));
    expect(ownerView(lease, at(10), false).alive).toBe(true);
    expect(ownerView(lease, at(10), null).alive).toBe(true);
    expect(ownerView(lease, at(10), true)).toMatchObject({ alive: false, why: "process gone" });
    expect(ownerView(lease, at(31), false)).toMatchObject({ alive: false, why: "lease expired" });
    expect(ownerView(null, at(0), null)).toMatchObject({ alive: null, why: "no lease recorded" });
  });
});
