import { describe, expect, it } from "vitest";
import { checkDeciderProperty, seededRandom } from "../../src/selftest/decider-property.js";

describe("selftest: seeded decider property", () => {
  it("the PRNG is deterministic per seed and uniform in [0, 1)", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(xs.reduce((s, x) => s + x, 0) / xs.length).toBeGreaterThan(0.45);
    expect(seededRandom(43)()).not.toBe(seededRandom(42)());
  });

  it("holds over several seeds, with SUCCESS and failed final gates both generated (not vacuous)", () => {
    for (const seed of [1, 2, 3, 0x10096a7e]) {
      const r = checkDeciderProperty(seed, 300);
      expect(r.violations).toEqual([]);
      expect(r.successes).toBeGreaterThan(0);
      expect(r.failedFinalGate).toBeGreaterThan(0);
      expect(r.refused).toBeGreaterThan(0);
    }
  });

  it("is reproducible: the same seed gives the same report", () => {
    expect(checkDeciderProperty(7, 100)).toEqual(checkDeciderProperty(7, 100));
  });
});
