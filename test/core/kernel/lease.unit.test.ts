// The one lease rule (docs/architecture.md "Leases"): an owner (pid, host, token) holds a lease until its
// expiry; only it renews; anyone else takes it over once it expired, or once its owner's process is gone on
// the taker's host; otherwise it is refused. Expected values are written out from that rule.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LeaseOwner } from "../../../src/core/kernel/event-parts.js";
import {
  heldBy,
  type LeaseView,
  leaseExpiry,
  leaseLive,
  leaseStatus,
  mayTake,
  renewal,
} from "../../../src/core/kernel/lease.js";

const A: LeaseOwner = { pid: 100, host: "box", token: "tok-a" };
const B: LeaseOwner = { pid: 200, host: "box", token: "tok-b" };
const FAR: LeaseOwner = { pid: 300, host: "elsewhere", token: "tok-c" };
const T = (iso: string) => new Date(iso);
const heldByA: LeaseView = { owner: A, expiresAt: "2026-01-01T00:00:30.000Z" };

describe("the lease rule", () => {
  it("a lease holds until its expiry, that instant excluded", () => {
    expect(leaseLive(heldByA, T("2026-01-01T00:00:29.999Z"))).toBe(true);
    expect(leaseLive(heldByA, T("2026-01-01T00:00:30.000Z"))).toBe(false);
    expect(leaseLive(heldByA, T("2026-01-01T00:01:00.000Z"))).toBe(false);
  });

  it("a lease taken or renewed at now runs ttl from now", () => {
    expect(leaseExpiry(T("2026-01-01T00:00:00.000Z"), 30_000)).toBe("2026-01-01T00:00:30.000Z");
    expect(leaseExpiry(T("2026-01-01T23:59:50.000Z"), 60_000)).toBe("2026-01-02T00:00:50.000Z");
  });

  it("status: none, live, expired, or owner gone (an expired lease is expired whatever its process)", () => {
    const now = T("2026-01-01T00:00:10.000Z");
    const later = T("2026-01-01T00:00:31.000Z");
    expect(leaseStatus(null, now, null)).toBe("none");
    expect(leaseStatus(heldByA, now, null)).toBe("live");
    expect(leaseStatus(heldByA, now, false)).toBe("live");
    expect(leaseStatus(heldByA, now, true)).toBe("owner_gone");
    expect(leaseStatus(heldByA, later, false)).toBe("expired");
    expect(leaseStatus(heldByA, later, true)).toBe("expired");
  });

  it("a free lease, or one's own, is simply taken", () => {
    const now = T("2026-01-01T00:00:10.000Z");
    expect(mayTake(null, B, now, false)).toEqual({ kind: "take" });
    expect(mayTake(heldByA, A, now, false)).toEqual({ kind: "take" });
    // Even "gone" says nothing about one's own lease: the claimant is that owner.
    expect(mayTake(heldByA, A, now, true)).toEqual({ kind: "take" });
  });

  it("another owner's live lease is refused; expired, it is taken over", () => {
    expect(mayTake(heldByA, B, T("2026-01-01T00:00:29.999Z"), false)).toEqual({ kind: "refused" });
    expect(mayTake(heldByA, B, T("2026-01-01T00:00:30.000Z"), false)).toEqual({
      kind: "take_over",
      reason: "expired",
    });
    expect(mayTake(heldByA, FAR, T("2026-01-01T00:05:00.000Z"), false)).toEqual({
      kind: "take_over",
      reason: "expired",
    });
  });

  it("a live lease whose process is gone is taken over only from the same host", () => {
    const now = T("2026-01-01T00:00:05.000Z");
    expect(mayTake(heldByA, B, now, true)).toEqual({ kind: "take_over", reason: "owner_gone" });
    expect(mayTake(heldByA, FAR, now, true)).toEqual({ kind: "refused" });
  });

  it("only the holder renews, even past the expiry while nobody took the lease over", () => {
    expect(heldBy(heldByA, "tok-a")).toBe(true);
    expect(heldBy(heldByA, "tok-b")).toBe(false);
    expect(heldBy(null, "tok-a")).toBe(false);
    expect(renewal(heldByA, "tok-a", T("2026-01-01T00:00:20.000Z"), 30_000)).toBe("2026-01-01T00:00:50.000Z");
    expect(renewal(heldByA, "tok-a", T("2026-01-01T00:00:45.000Z"), 30_000)).toBe("2026-01-01T00:01:15.000Z");
    expect(renewal(heldByA, "tok-b", T("2026-01-01T00:00:20.000Z"), 30_000)).toBeNull();
    expect(renewal(null, "tok-a", T("2026-01-01T00:00:20.000Z"), 30_000)).toBeNull();
  });

  const owner = fc.record({
    pid: fc.integer({ min: 1, max: 4 }),
    host: fc.constantFrom("box", "elsewhere"),
    token: fc.constantFrom("t1", "t2", "t3"),
  });
  const ms = fc.integer({ min: 0, max: 120_000 });
  const base = Date.parse("2026-01-01T00:00:00.000Z");

  it("property: a take is refused exactly when another owner's lease is live and not seen gone on its host", () => {
    fc.assert(
      fc.property(
        fc.option(fc.record({ owner, expires: ms })),
        owner,
        ms,
        fc.boolean(),
        (held, claimant, at, gone) => {
          const lease = held && { owner: held.owner, expiresAt: new Date(base + held.expires).toISOString() };
          const now = new Date(base + at);
          const d = mayTake(lease, claimant, now, gone);
          const other = held !== null && held.owner.token !== claimant.token;
          const live = held !== null && held.expires > at;
          const goneHere = gone && held !== null && held.owner.host === claimant.host;
          if (!other) expect(d).toEqual({ kind: "take" });
          else if (!live) expect(d).toEqual({ kind: "take_over", reason: "expired" });
          else if (goneHere) expect(d).toEqual({ kind: "take_over", reason: "owner_gone" });
          else expect(d).toEqual({ kind: "refused" });
        },
      ),
    );
  });

  it("property: a renewed lease is live until ttl from now and refused to every other owner then", () => {
    fc.assert(
      fc.property(owner, owner, ms, fc.integer({ min: 1, max: 120_000 }), (holder, other, at, ttl) => {
        fc.pre(holder.token !== other.token);
        const now = new Date(base + at);
        const expiresAt = renewal(
          { owner: holder, expiresAt: new Date(base).toISOString() },
          holder.token,
          now,
          ttl,
        );
        expect(expiresAt).toBe(new Date(base + at + ttl).toISOString());
        const renewed = { owner: holder, expiresAt: expiresAt as string };
        expect(leaseLive(renewed, new Date(base + at + ttl - 1))).toBe(true);
        expect(leaseLive(renewed, new Date(base + at + ttl))).toBe(false);
        expect(mayTake(renewed, other, now, false)).toEqual({ kind: "refused" });
        expect(renewal(renewed, other.token, now, ttl)).toBeNull();
      }),
    );
  });
});
