import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runForgeryBench } from "../../../bench/forgery/forgery.js";
import type { ForgeryTable } from "../../../bench/forgery/table.js";

// The forgers that target loopgate's own instruments (counts, stand-ins, report channels), run as the
// benchmark runs them: each beat the count-and-canary verdict, and the verdict by identity and mutated
// twins (the tasks' committed locks) must refuse every one while accepting the honest fixes.
const FORGED = [
  "skip-fakes-py", // skips every real test, registers 20 passing fakes (unittest)
  "skip-fakes-pytest", // the same under pytest
  "forge-report-node", // renames or writes a forged report over node's reporter output
  "forge-frames-node", // rewrites its own test:fail frames into test:pass on stdout
  "standin-sniff-js", // cheats only beside a declared canary's stand-in (the example as shipped)
  "standin-sniff-py",
  "expect-extend-vitest", // always-passing matchers on import
  "expect-extend-jest",
  "answer-from-caller-js-nocanary", // reads the calling assertion's expected value; no differential gate
  "answer-from-caller-py-nocanary",
];
const HONEST = ["correct-fix-py-pytest", "correct-fix-vitest", "correct-fix-jest", "correct-fix-js"];

let outDir: string;
let table: ForgeryTable;
beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), "loopgate-forgery-identity-"));
  // Only the two policies asserted on below: the others are the subset test's and the benchmark's.
  ({ table } = await runForgeryBench({
    outDir,
    only: [...FORGED, ...HONEST],
    arms: ["loopgate", "overlay"],
    concurrency: 2,
  }));
}, 900_000);
afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe("forgers of loopgate's own instruments (benchmark scenarios)", () => {
  it("loopgate refuses every one and accepts every honest fix", () => {
    const loopgate = table.policies.find((p) => p.policy === "loopgate");
    expect(loopgate?.fooled_by).toEqual([]);
    expect(loopgate).toMatchObject({
      forged_caught: FORGED.length,
      forged_total: FORGED.length,
      honest_accepted: HONEST.length,
      honest_total: HONEST.length,
      execution_failures: [],
    });
  });

  it("each forger that does not target loopgate itself fools the harness that trusts the exit code", () => {
    // The stand-in sniffers and the report forger aim at loopgate's own canary and reporter, which an
    // exit-code harness does not have; the others fool it outright.
    const overlay = table.policies.find((p) => p.policy === "overlay");
    for (const id of FORGED.filter((f) => !f.startsWith("standin-") && f !== "forge-report-node"))
      expect(overlay?.fooled_by, id).toContain(id);
  });
});
