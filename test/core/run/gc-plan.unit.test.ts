// gc's decisions: only runs with a final verdict go, and only when old enough and not among the newest.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ageProblem, type GcRun, parseAge, planGc } from "../../../src/core/run/gc-plan.js";
import { runPhase } from "../../../src/core/run/run-phase.js";

const NOW = new Date("2026-03-10T12:00:00Z");
const DAY = 86_400_000;
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const run = (id: string, startedDaysAgo: number, over: Partial<GcRun> = {}): GcRun => ({
  runId: id,
  phase: "finished",
  startedAt: ago(startedDaysAgo * DAY),
  finishedAt: ago(startedDaysAgo * DAY - 60_000),
  ...over,
});
const removed = (runs: GcRun[], olderThanMs: number, keep: number) =>
  planGc(runs, { olderThanMs, keep }, NOW)
    .filter((d) => d.remove)
    .map((d) => d.runId)
    .sort();

describe("parseAge", () => {
  it("reads s, m, h, d, w and refuses a bare number or an unknown unit", () => {
    expect(parseAge("30m")).toBe(30 * 60_000);
    expect(parseAge("12h")).toBe(12 * 3_600_000);
    expect(parseAge("7d")).toBe(7 * DAY);
    expect(parseAge("2w")).toBe(14 * DAY);
    expect(parseAge("0s")).toBe(0);
    expect(parseAge("1.5d")).toBe(1.5 * DAY);
    for (const bad of ["7", "7y", "-1d", "d", "", "7 days"]) expect(parseAge(bad), bad).toBeNull();
  });

  it("shares the duration grammar (ms too) and stops at 100 years, which PostgreSQL can still subtract", () => {
    expect(parseAge("1500ms")).toBe(1500);
    expect(parseAge("36500d")).toBe(36_500 * DAY);
    expect(parseAge("36501d")).toBeNull();
    expect(ageProblem("36501d")).toBe('"36501d" is longer than the limit of 36500d');
    expect(ageProblem("7")).toBe('not a duration: "7"');
  });
});

describe("planGc", () => {
  const runs = [run("a", 30), run("b", 10), run("c", 3), run("d", 0.5)];

  it("removes finished runs older than the age", () => {
    expect(removed(runs, 7 * DAY, 0)).toEqual(["a", "b"]);
    expect(removed(runs, 1 * DAY, 0)).toEqual(["a", "b", "c"]);
    expect(removed(runs, 0, 0)).toEqual(["a", "b", "c", "d"]);
    expect(removed(runs, 60 * DAY, 0)).toEqual([]);
  });

  it("keeps the N most recently started runs whatever their age", () => {
    expect(removed(runs, 0, 2)).toEqual(["a", "b"]);
    expect(removed(runs, 7 * DAY, 3)).toEqual(["a"]);
    expect(removed(runs, 0, 10)).toEqual([]);
  });

  it("never removes a run without a verdict or an interrupted one, however old", () => {
    const old = [
      run("live", 100, { phase: "running", finishedAt: null }),
      run("int", 90, { phase: "interrupted" }),
    ];
    const d = planGc(old, { olderThanMs: 0, keep: 0 }, NOW);
    expect(d.every((x) => !x.remove)).toBe(true);
    expect(d.find((x) => x.runId === "live")?.why).toMatch(/no verdict/);
    expect(d.find((x) => x.runId === "int")?.why).toMatch(/interrupted/);
  });

  it("property: whatever the runs and policy, a removed run is finished, old enough and not among the newest", () => {
    const arb = fc.array(
      fc.record({
        phase: fc.constantFrom("running", "interrupted", "finished" as const),
        started: fc.integer({ min: 0, max: 100 * DAY }),
        lasted: fc.integer({ min: 0, max: DAY }),
      }),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(
        arb,
        fc.integer({ min: 0, max: 40 * DAY }),
        fc.integer({ min: 0, max: 10 }),
        (rs, olderThanMs, keep) => {
          const runs: GcRun[] = rs.map((r, i) => ({
            runId: `r${String(i).padStart(3, "0")}`,
            phase: r.phase as GcRun["phase"],
            startedAt: ago(r.started),
            finishedAt: r.phase === "running" ? null : ago(Math.max(0, r.started - r.lasted)),
          }));
          const newest = [...runs]
            .sort(
              (a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt) || b.runId.localeCompare(a.runId),
            )
            .slice(0, keep)
            .map((r) => r.runId);
          const decisions = planGc(runs, { olderThanMs, keep }, NOW);
          expect(decisions.length).toBe(runs.length);
          for (const d of decisions.filter((x) => x.remove)) {
            const r = runs.find((x) => x.runId === d.runId) as GcRun;
            expect(r.phase).toBe("finished");
            expect(NOW.getTime() - Date.parse(r.finishedAt as string)).toBeGreaterThanOrEqual(olderThanMs);
            expect(newest).not.toContain(r.runId);
          }
        },
      ),
    );
  });
});

describe("runPhase", () => {
  const meta = { id: "e", at: NOW.toISOString(), origin: "runtime" } as never;
  const finished = (status: string, reason: string) =>
    [{ type: "run_finished", data: { status, reason }, meta }] as never;
  it("reads running, interrupted and finished from the log", () => {
    expect(runPhase([])).toBe("running");
    expect(runPhase(finished("TOOL_FAILURE", "interrupted (SIGINT); the run did not finish"))).toBe(
      "interrupted",
    );
    expect(runPhase(finished("TOOL_FAILURE", "the sandbox is unavailable"))).toBe("finished");
    expect(runPhase(finished("ESCALATED", "interrupted (not a signal reason on an ESCALATED run)"))).toBe(
      "finished",
    );
    expect(runPhase(finished("SUCCESS", "ok"))).toBe("finished");
  });
});
