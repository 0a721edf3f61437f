import { afterEach, describe, expect, it, vi } from "vitest";
import { handleInterrupts, SAME_PRESS_MS } from "../../../src/cli/output/interrupt.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("handleInterrupts", () => {
  it("the first SIGINT aborts; a copy of the same press is ignored; a later press quits with 130", () => {
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
    let t = 1_000;
    const seen: string[] = [];
    const h = handleInterrupts(
      (sig) => seen.push(sig),
      () => t,
    );
    try {
      process.emit("SIGINT", "SIGINT");
      expect(h.signal.aborted).toBe(true);
      expect(h.signal.reason).toBe("SIGINT");
      t += 5; // npm forwarding the same Ctrl-C a few milliseconds later
      process.emit("SIGINT", "SIGINT");
      expect(exit).not.toHaveBeenCalled();
      t += SAME_PRESS_MS;
      process.emit("SIGINT", "SIGINT");
      expect(exit).toHaveBeenCalledWith(130);
      expect(seen).toEqual(["SIGINT"]);
    } finally {
      h.dispose();
    }
  });

  it("dispose removes its handlers", () => {
    const before = process.listenerCount("SIGTERM");
    const h = handleInterrupts(() => {});
    expect(process.listenerCount("SIGTERM")).toBe(before + 1);
    h.dispose();
    expect(process.listenerCount("SIGTERM")).toBe(before);
  });
});
