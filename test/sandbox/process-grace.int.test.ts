// runProcess's graceful abort (killGraceMs): the group gets SIGTERM first, a program that handles it ends
// on its own; one that ignores it is killed with SIGKILL once the grace has passed.
import { describe, expect, it } from "vitest";
import { runProcess } from "../../src/sandbox/process.js";

const env = { PATH: "/usr/bin:/bin" };

/** Aborts once the program printed `ready` (its trap is in place). */
function abortWhenReady(): { controller: AbortController; onOutput: (s: string) => void } {
  const controller = new AbortController();
  let seen = "";
  return {
    controller,
    onOutput: (s) => {
      seen += s;
      if (seen.includes("ready")) controller.abort();
    },
  };
}

describe("runProcess killGraceMs", () => {
  it("SIGTERM first: a program that handles it ends on its own, cleanly", async () => {
    const { controller, onOutput } = abortWhenReady();
    const r = await runProcess(
      ["sh", "-c", 'trap "echo got-term; exit 0" TERM; echo ready; sleep 30 & wait'],
      {
        cwd: "/",
        env,
        timeoutMs: 60_000,
        signal: controller.signal,
        killGraceMs: 20_000,
        onOutput,
      },
    );
    expect(r.output).toContain("got-term");
    expect(r.exitCode).toBe(0);
    // Far inside the grace: it was SIGTERM that ended it, not the SIGKILL 20 s later.
    expect(r.durationMs).toBeLessThan(15_000);
  });

  it("a program that ignores SIGTERM is killed with SIGKILL after the grace", async () => {
    const { controller, onOutput } = abortWhenReady();
    const t0 = Date.now();
    const r = await runProcess(["sh", "-c", 'trap "" TERM; echo ready; while :; do sleep 1; done'], {
      cwd: "/",
      env,
      timeoutMs: 60_000,
      signal: controller.signal,
      killGraceMs: 1_000,
      onOutput,
    });
    expect(r.signal).toBe("SIGKILL");
    expect(r.timedOut).toBe(false);
    // Not before the grace, and long before its timeout.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it("without it, an abort kills at once with SIGKILL", async () => {
    const { controller, onOutput } = abortWhenReady();
    const r = await runProcess(
      ["sh", "-c", 'trap "echo got-term; exit 0" TERM; echo ready; sleep 30 & wait'],
      {
        cwd: "/",
        env,
        timeoutMs: 60_000,
        signal: controller.signal,
        onOutput,
      },
    );
    expect(r.output).not.toContain("got-term");
    expect(r.signal).toBe("SIGKILL");
  });
});
