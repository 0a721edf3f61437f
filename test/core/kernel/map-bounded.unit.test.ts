import { describe, expect, it } from "vitest";
import { mapBounded } from "../../../src/core/kernel/map-bounded.js";

/** A promise and the function that settles it, to hold calls open until the test lets them go. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => {
    open = r;
  });
  return { done, open };
}

describe("mapBounded", () => {
  it("keeps the items' order whatever order the calls end in", async () => {
    const gates = [gate(), gate(), gate()];
    const out = mapBounded([0, 1, 2], 3, async (i) => {
      await gates[i]?.done;
      return i * 10;
    });
    gates[2]?.open();
    gates[0]?.open();
    gates[1]?.open();
    expect(await out).toEqual([0, 10, 20]);
  });

  it("never has more than `limit` calls under way, and makes every call once", async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    const items = Array.from({ length: 17 }, (_, i) => i);
    await mapBounded(items, 4, async (i) => {
      running++;
      most = Math.max(most, running);
      seen.push(i);
      await new Promise((r) => setImmediate(r));
      running--;
    });
    expect(most).toBe(4);
    expect([...seen].sort((a, b) => a - b)).toEqual(items);
  });

  it("rejects with a call's error once the calls already started have settled", async () => {
    const slow = gate();
    let slowEnded = false;
    const out = mapBounded([0, 1], 2, async (i) => {
      if (i === 0) throw new Error("boom");
      await slow.done;
      slowEnded = true;
    });
    const settled = out.then(
      () => "resolved",
      (e: Error) => `rejected ${e.message} after the slow call ended: ${slowEnded}`,
    );
    slow.open();
    expect(await settled).toBe("rejected boom after the slow call ended: true");
  });

  it("returns an empty list for no items without calling", async () => {
    expect(await mapBounded([], 3, async () => 1)).toEqual([]);
  });
});
