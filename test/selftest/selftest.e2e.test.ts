import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SelftestReport } from "../../src/selftest/run-selftest.js";
import { summarize } from "../../src/selftest/verdict.js";
import { loopgate, parseStdout, ROOT, removeTemps, show, tempDir } from "../e2e/cli.js";

// No provider is configured for these runs, whatever this machine has: the live dimension must be
// NOT_VERIFIABLE, never a pass.
const NO_PROVIDER = {
  ANTHROPIC_API_KEY: "",
  OPENAI_API_KEY: "",
  LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: "",
  LOOPGATE_SELFTEST_MODEL: "",
  LOOPGATE_SELFTEST_README: "",
};

afterAll(removeTemps);

describe("loopgate selftest", () => {
  it("without a provider: every dimension but live passes → READY_WITH_CAVEATS, exit 1, in under 60 s", async () => {
    const t0 = Date.now();
    const r = await loopgate(["selftest", "--json"], { env: NO_PROVIDER, timeoutMs: 110_000 });
    const elapsed = Date.now() - t0;
    const report = parseStdout<SelftestReport>(r);
    const states = Object.fromEntries(report.dimensions.map((d) => [d.id, d.state]));
    expect(states, show(r)).toEqual({
      contracts: "PASS",
      orchestrator: "PASS",
      end_to_end: "PASS",
      cost: "PASS",
      live: "NOT_VERIFIABLE",
      documentation: "PASS",
    });
    // The verdict follows from the rules, not from the report's word for it.
    const derived = summarize(report.dimensions);
    expect(derived.verdict).toBe("READY_WITH_CAVEATS");
    expect(report).toMatchObject({
      verdict: derived.verdict,
      total: 90,
      ceiling: 100,
      percent: 90,
      exit_code: 1,
    });
    expect(r.code, show(r)).toBe(1);
    expect(report.dimensions.find((d) => d.id === "live")?.checks[0]?.detail).toMatch(
      /no provider configured/,
    );
    expect(r.stderr).toMatch(/deterministic contracts: PASS 20\/20/);
    expect(elapsed).toBeLessThan(60_000);
  }, 120_000);

  it("docs missing a command fail documentation → NOT_READY, exit 2, with the table on stdout", async () => {
    // A copy of the README and docs/ with one command renamed everywhere: LOOPGATE_SELFTEST_README points at
    // the copy's README, and the docs/ folder beside it is read.
    const dir = tempDir();
    cpSync(join(ROOT, "README.md"), join(dir, "README.md"));
    cpSync(join(ROOT, "docs"), join(dir, "docs"), { recursive: true });
    const pages = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((p) => p.endsWith(".md"));
    for (const p of pages) {
      const text = readFileSync(join(dir, p), "utf8");
      writeFileSync(join(dir, p), text.replaceAll("loopgate status RUN", "loopgate state RUN"));
    }
    const r = await loopgate(["selftest"], {
      env: { ...NO_PROVIDER, LOOPGATE_SELFTEST_README: join(dir, "README.md") },
      timeoutMs: 110_000,
    });
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toMatch(
      /^documentation\s+FAIL\s+\d+\/15\s+✗ README and docs show every command.*loopgate status RUN/m,
    );
    expect(r.stdout).toMatch(/^live operation\s+NOT_VERIFIABLE\s+0\/10/m);
    expect(r.stdout).toMatch(/→ NOT_READY \(exit 2\)/);
  }, 120_000);
});
