import { afterAll, describe, expect, it } from "vitest";
import { exampleTask, loopgate, removeTemps, tempDir } from "./cli.js";

afterAll(removeTemps);

// Flags of the built-in agent are refused, naming the flag, when no --model runs the built-in agent.
describe.concurrent("built-in agent flags without --model", () => {
  for (const [flag, value] of [
    ["--step-escalation", "scripted:x.yaml"],
    ["--max-turns", "3"],
    ["--record", "out.yaml"],
  ] as const) {
    it(`${flag} with --noop exits 2 naming ${flag}`, async () => {
      const r = await loopgate([
        "run",
        exampleTask("js-slugify"),
        "--noop",
        flag,
        value,
        "--store",
        tempDir(),
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(flag);
      expect(r.stdout).toBe("");
    });
  }
});
