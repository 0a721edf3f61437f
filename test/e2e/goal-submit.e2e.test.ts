// loopgate goal submit: with a folder store, refused (the run queue lives in PostgreSQL) and goal run is
// named; with an unreachable PostgreSQL store, a clear error naming it. Queuing a goal's turns on a real
// database is tested with the workers that run them (goal-worker-postgres.e2e.test.ts).
import { afterAll, describe, expect, it } from "vitest";
import { loopgate, removeTemps, show } from "./cli.js";
import { GOAL, newGoal } from "./goal-support.js";

afterAll(removeTemps);

describe("goal submit", () => {
  it("with a folder store: refused (exit 2): the run queue lives in PostgreSQL, and goal run is named", async () => {
    const store = await newGoal();
    const r = await loopgate(["goal", "submit", GOAL, "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/the run queue, which lives in PostgreSQL/);
    expect(r.stderr).toContain(`goal run ${GOAL} --store ${store}`);
  }, 60_000);

  it("with a PostgreSQL store that does not answer: exit 2, naming the store, nothing queued", async () => {
    const r = await loopgate(["goal", "submit", GOAL, "--store", "postgres://nobody@127.0.0.1:1/none"]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(
      /store postgres:\/\/nobody@127\.0\.0\.1:1\/none: PostgreSQL refused the connection/,
    );
  }, 60_000);
});
