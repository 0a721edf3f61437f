import { describe, expect, it } from "vitest";
import {
  decideTurnLease,
  evolveTurnLease,
  type TurnLease,
  type TurnLeaseCommand,
  type TurnLeaseEvent,
  TurnLeaseHeldError,
  TurnLeaseLostError,
} from "../../../../src/core/goal/turn/turn-lease.js";
import { given } from "../../../support/decider.js";

// The goal's turn lease: one governed turn at a time; now and "is that process gone" are inputs.
const leaseDecider = {
  initialState: (): TurnLease | null => null,
  evolve: evolveTurnLease,
  decide: (c: TurnLeaseCommand, s: TurnLease | null) => decideTurnLease("g1", c, s),
};
const A = { pid: 11, host: "h1", token: "tok-a" };
const B = { pid: 22, host: "h1", token: "tok-b" };
const NOW = "2026-12-01T10:00:00.000Z";
const acquiredA: TurnLeaseEvent = {
  type: "turn_lease_acquired",
  data: { holder: "agent-a", owner: A, expires_at: "2026-12-01T10:01:00.000Z", previous: null },
};
const acquire = (owner = B, now = NOW, owner_gone = false): TurnLeaseCommand => ({
  type: "acquire",
  holder: "agent-b",
  owner,
  now: new Date(now),
  ttlMs: 60_000,
  ownerGone: owner_gone,
});

describe("turn lease", () => {
  it("a free goal is leased until now + ttl", () => {
    given(leaseDecider, [])
      .when(acquire())
      .thenEvents([
        {
          type: "turn_lease_acquired",
          data: { holder: "agent-b", owner: B, expires_at: "2026-12-01T10:01:00.000Z", previous: null },
        },
      ]);
  });

  it("a live lease of another owner is refused: turn in progress by … until …", () => {
    const e = given(leaseDecider, [acquiredA])
      .when(acquire(B, "2026-12-01T10:00:59.999Z"))
      .thenError(
        /turn in progress by agent-a \(process 11 on h1\) until 2026-12-01T10:01:00.000Z/,
        TurnLeaseHeldError,
      );
    expect((e as TurnLeaseHeldError).lease.holder).toBe("agent-a");
  });

  it("an expired lease is taken over, naming what it took over", () => {
    given(leaseDecider, [acquiredA])
      .when(acquire(B, "2026-12-01T10:01:00.000Z"))
      .thenEvents([
        {
          type: "turn_lease_acquired",
          data: {
            holder: "agent-b",
            owner: B,
            expires_at: "2026-12-01T10:02:00.000Z",
            previous: {
              holder: "agent-a",
              owner: A,
              expires_at: "2026-12-01T10:01:00.000Z",
              reason: "expired",
            },
          },
        },
      ]);
  });

  it("a live lease whose process is gone on the same host is taken over; on another host it is not", () => {
    const ev = given(leaseDecider, [acquiredA])
      .when(acquire(B, NOW, true))
      .events();
    expect(ev[0]?.type === "turn_lease_acquired" && ev[0].data.previous?.reason).toBe("owner_gone");
    given(leaseDecider, [acquiredA])
      .when(acquire({ ...B, host: "h2" }, NOW, true))
      .thenError(/turn in progress by agent-a/, TurnLeaseHeldError);
  });

  it("heartbeat extends only the holder's lease; anyone else is refused", () => {
    given(leaseDecider, [acquiredA])
      .when({ type: "heartbeat", token: "tok-a", now: new Date("2026-12-01T10:00:30.000Z"), ttlMs: 60_000 })
      .thenEvents([
        { type: "turn_lease_heartbeat", data: { token: "tok-a", expires_at: "2026-12-01T10:01:30.000Z" } },
      ]);
    given(leaseDecider, [acquiredA])
      .when({ type: "heartbeat", token: "tok-b", now: new Date(NOW), ttlMs: 60_000 })
      .thenError(/no longer holds the turn lease/, TurnLeaseLostError);
  });

  it("release frees the goal; a release by another owner is refused and changes nothing", () => {
    const freed = given(leaseDecider, [acquiredA])
      .when({ type: "release", token: "tok-a", reason: "done" })
      .state();
    expect(freed).toBeNull();
    given(leaseDecider, [acquiredA])
      .when({ type: "release", token: "tok-b", reason: "x" })
      .thenError(/no longer holds the turn lease/, TurnLeaseLostError);
    // A forged heartbeat or release in the log does not move someone else's lease.
    const s = [
      acquiredA,
      { type: "turn_lease_heartbeat", data: { token: "tok-b", expires_at: "2999-01-01T00:00:00.000Z" } },
      { type: "turn_lease_released", data: { token: "tok-b", reason: "x" } },
    ].reduce((l, e) => evolveTurnLease(l, e as TurnLeaseEvent), null as TurnLease | null);
    expect(s?.expiresAt).toBe("2026-12-01T10:01:00.000Z");
  });
});
