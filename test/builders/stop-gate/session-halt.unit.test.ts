import { describe, expect, it } from "vitest";
import { SessionHalt } from "../../../src/builders/stop-gate/session-halt.js";

describe("SessionHalt: stopping an agent session", () => {
  it("keeps the first reason, runs the builder's stop with it each time, and wakes the waiting pass", async () => {
    const stops: string[] = [];
    const h = new SessionHalt((why) => stops.push(why));
    expect(h.why).toBeNull();
    h.halt("the provider is down");
    h.halt("interrupted");
    expect(h.why).toBe("the provider is down");
    expect(stops).toEqual(["the provider is down", "the provider is down"]);
    await expect(h.woken).resolves.toBe("halted");
  });

  it("halts on the run's interrupt, once per signal, at once when the signal already fired", () => {
    const stops: string[] = [];
    const h = new SessionHalt((why) => stops.push(why));
    const run = new AbortController();
    h.listen(run.signal);
    h.listen(run.signal);
    expect(stops).toEqual([]);
    run.abort("SIGINT");
    expect(stops).toEqual(["loopgate: the run was interrupted (SIGINT); stop now"]);
    const late = new SessionHalt((why) => stops.push(why));
    const fired = new AbortController();
    fired.abort("SIGTERM");
    late.listen(fired.signal);
    expect(late.why).toBe("loopgate: the run was interrupted (SIGTERM); stop now");
  });
});
