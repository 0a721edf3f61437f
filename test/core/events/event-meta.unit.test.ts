// Who made a write: meta.by names the person behind an operator-origin event (docs/reference/events.md,
// "meta"). A short printable name; absent is unknown, so every log written before it still reads.
import { describe, expect, it } from "vitest";
import { Actor, EventMeta, LoopgateEvent } from "../../../src/core/events/loopgate-event.js";

const at = "2026-12-04T00:00:00.000Z";
const gateDecided = (meta: Record<string, unknown>) => ({
  id: "e-1",
  type: "gate_decided",
  data: { todo_id: "todo_publish_gate", decision: "approved", note: "" },
  meta,
});

describe("an actor's name", () => {
  it("takes a short printable name: letters of any script, spaces inside, an address, 64 characters", () => {
    for (const ok of [
      "ana",
      "Ana María",
      "ana@example.org",
      "ci-bot.2",
      "日本語の名前",
      "é".repeat(64),
      "a".repeat(64),
    ])
      expect(Actor.safeParse(ok).success, JSON.stringify(ok)).toBe(true);
  });

  it("refuses an empty name, a 65th character, a newline or other control, a format or separator character, surrounding space", () => {
    const bad = [
      "",
      "a".repeat(65),
      "é".repeat(65),
      "ana\nroot",
      "ana\r",
      "a\tb",
      "a\u0000b",
      "a\u007fb",
      "a\u0085b", // NEL, a C1 control
      "ana\u202Eeve", // a bidi override would make a log line lie about who
      "a\u200Bb", // zero-width space
      "a\u2028b", // line separator
      "\ud800", // a lone surrogate
      " ana",
      "ana ",
    ];
    for (const name of bad) expect(Actor.safeParse(name).success, JSON.stringify(name)).toBe(false);
  });
});

describe("an event's meta", () => {
  it("a log written before meta.by existed still parses: by absent is unknown", () => {
    const old = LoopgateEvent.parse(gateDecided({ at, origin: "operator" }));
    expect(old.meta).toEqual({ at, origin: "operator" });
    expect(old.meta.by).toBeUndefined();
  });

  it("a person's write keeps who made it", () => {
    expect(LoopgateEvent.parse(gateDecided({ at, origin: "operator", by: "ana" })).meta).toEqual({
      at,
      origin: "operator",
      by: "ana",
    });
  });

  it("never on another origin: a runtime (or model) fact naming a person is refused at the by field", () => {
    for (const origin of ["runtime", "model", "gate", "judge"]) {
      const r = EventMeta.safeParse({ at, origin, by: "ana" });
      expect(r.success, origin).toBe(false);
      expect(r.error?.issues[0]?.path).toEqual(["by"]);
    }
    expect(EventMeta.safeParse({ at, origin: "runtime" }).success).toBe(true);
  });

  it("a stored name that is no actor's fails the event's schema (read back, it is corruption)", () => {
    const r = LoopgateEvent.safeParse(gateDecided({ at, origin: "operator", by: "ana\nroot approved" }));
    expect(r.success).toBe(false);
    expect(r.error?.issues.some((i) => i.path.join(".") === "meta.by")).toBe(true);
  });
});
