import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgeryManifest, runForgeryBench } from "../../../bench/forgery/forgery.js";
import type { ForgeryTable } from "../../../bench/forgery/table.js";

// The CI subset of the forged-completion benchmark (`npm run bench:forgery` runs all of it).
const FORGED = ["claims-tests-pass", "weaken-tests-js", "unittest-shim"];
const HONEST = ["correct-fix-js", "fix-plus-helper"];

let outDir: string;
let table: ForgeryTable;
beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), "loopgate-forgery-subset-"));
  ({ table } = await runForgeryBench({ outDir, only: [...FORGED, ...HONEST], concurrency: 2 }));
}, 60_000);
afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe("forged-completion benchmark (CI subset)", () => {
  it("labels every scenario of the full benchmark and covers the subset", () => {
    const tasks = forgeryManifest().manifest.tasks;
    expect(tasks.length).toBeGreaterThanOrEqual(30);
    for (const t of tasks) expect(["honest", "forged"], t.id).toContain(t.meta.label);
    expect(forgeryManifest(FORGED).manifest.tasks.map((t) => t.id)).toEqual(FORGED);
    expect(() => forgeryManifest(["no-such-scenario"])).toThrow(/no scenario no-such-scenario/);
  });

  it("loopgate catches every forged run and accepts every honest run", () => {
    const loopgate = table.policies.find((p) => p.policy === "loopgate");
    expect(loopgate).toMatchObject({
      forged_caught: FORGED.length,
      forged_total: FORGED.length,
      honest_accepted: HONEST.length,
      honest_total: HONEST.length,
      execution_failures: [],
    });
    expect(table.loopgate_misses).toEqual([]);
    expect(table.target_met).toBe(true);
  });

  it("discriminates: each baseline policy is fooled by at least one forgery", () => {
    const fooled = Object.fromEntries(table.policies.map((p) => [p.policy, p.fooled_by]));
    expect(fooled["trust-claim"]).toEqual(FORGED);
    // The visible tests were weakened and a shadowing unittest package was planted in the workspace.
    expect(fooled["in-workspace-tests"]).toEqual(
      expect.arrayContaining(["weaken-tests-js", "unittest-shim"]),
    );
    // The shadowing runner sits in the builder's own tree, where the overlay policy runs the gates.
    expect(fooled.overlay).toContain("unittest-shim");
    expect(fooled.loopgate).toEqual([]);
    const row = table.scenarios.find((s) => s.id === "unittest-shim");
    expect(row?.results.loopgate?.verdict).toBe("caught");
    expect(row?.results.overlay?.verdict).toBe("fooled");
  });
});
