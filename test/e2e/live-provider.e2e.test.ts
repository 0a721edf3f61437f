import { describe, expect, it } from "vitest";
import { exampleTask, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

// A real model on a real example, end to end. Needs a key and network access to the provider;
// this machine has neither, so it is skipped here and says why.
const key = process.env.ANTHROPIC_API_KEY;
if (!key) console.info("live-provider e2e skipped: ANTHROPIC_API_KEY is not set");

describe.skipIf(!key)("live provider (anthropic)", () => {
  it("runs js-slugify with a real model under a cost cap and ends with a typed verdict", async () => {
    const store = tempDir();
    const r = await loopgate(
      [
        "run",
        exampleTask("js-slugify"),
        "--model",
        "anthropic:claude-sonnet-4-5",
        "--max-cost",
        "1",
        "--json",
        "--store",
        store,
      ],
      { timeoutMs: 600_000 },
    );
    removeTemps();
    const env = parseStdout<{ status: string; audit: { event_count: number } }>(r);
    expect(["SUCCESS", "ESCALATED"], show(r)).toContain(env.status);
    expect(r.code).toBe(env.status === "SUCCESS" ? 0 : 1);
  }, 620_000);
});
