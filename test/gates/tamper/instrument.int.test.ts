import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { SubprocessGateSpec } from "../../../src/core/task/task.js";
import { prepareTamperCheck } from "../../../src/gates/tamper/instrument.js";

let env: string;
beforeEach(() => {
  env = mkdtempSync(join(tmpdir(), "lg-instrument-"));
  mkdirSync(join(env, "test"));
  writeFileSync(
    join(env, "test", "a.test.js"),
    'import { test } from "node:test";\ntest("adds", () => {});\n',
  );
});
afterEach(() => rmSync(env, { recursive: true, force: true }));

const argv = ["node", "--test", "--test-name-pattern=adds", "test/"];
const spec = { id: "unit", run: argv, feedback: "summary", writable: false } as unknown as SubprocessGateSpec;
const locked = { runner: "node-test", tests: ["test/a.test.js::adds"], twins: {}, untwinned: [] };

describe("prepareTamperCheck with a name filter that leaves no room for loopgate's canary", () => {
  test("without a lock the run falls back to its exit code and says why", async () => {
    const t = await prepareTamperCheck(spec, argv, env);
    t.cleanup();
    expect(t.check).toBe("none");
    expect(t.note).toContain("--test-name-pattern");
  });

  test("with a lock the run is still read per test and held to the recorded names, without a canary", async () => {
    const t = await prepareTamperCheck(spec, argv, env, { identity: { mode: "enforce", gate: locked } });
    t.cleanup();
    expect(t.check).toBe("auto");
    expect(t.plan?.canary).toBeNull();
    expect(t.rule).toEqual({ mode: "enforce", required: locked.tests });
    expect(t.note).toContain("no canary");
  });
});
