// A passed `node --test` gate exits 1 because loopgate's own canary fails inside the same run: the
// envelope, `status`, `report` (Markdown and JUnit) say so and mark the canary's lines in the log. A gate
// whose real tests fail is reported as a failure, never explained away by the canary.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Envelope, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

const MARK = "[loopgate's canary, fails on purpose] ";

type Gate = Envelope["gates"][number] & {
  summary?: string;
  exit_code_note?: string;
  tamper?: {
    check: string;
    runner: string | null;
    canary: { auto: boolean; declared: boolean; tests?: string[]; failed_as_expected?: boolean };
    tests: { passed: number; failed: number; skipped: number } | null;
  };
};

// The real tests, named here: the canary is the only test of the run whose name is not one of these.
const REAL = ["adds two numbers", "adds a negative number"];

/** A task whose one gate is `node --test test/` over a repository whose add() is right, or wrong. */
function nodeTestTask(right: boolean): string {
  const dir = tempDir("loopgate-e2e-canary-");
  mkdirSync(join(dir, "repo", "src"), { recursive: true });
  mkdirSync(join(dir, "repo", "test"));
  writeFileSync(
    join(dir, "repo", "src", "add.js"),
    `module.exports = (a, b) => ${right ? "a + b" : "a - b"};\n`,
  );
  writeFileSync(
    join(dir, "repo", "test", "add.test.js"),
    [
      'const test = require("node:test");',
      'const assert = require("node:assert");',
      'const add = require("../src/add.js");',
      `test(${JSON.stringify(REAL[0])}, () => assert.strictEqual(add(2, 3), 5));`,
      `test(${JSON.stringify(REAL[1])}, () => assert.strictEqual(add(2, -3), -1));`,
      "",
    ].join("\n"),
  );
  const task = join(dir, "task.yaml");
  writeFileSync(
    task,
    [
      "id: canary-marking",
      "prompt: keep add() right",
      "workspace: ./repo",
      "gates:",
      "  - id: unit",
      '    run: ["node", "--test", "test/"]',
      "    timeout: 60s",
      "    feedback: log",
      "budget: { attempts: 1 }",
      "",
    ].join("\n"),
  );
  return task;
}

/** Runs the task with a builder that changes nothing; returns the store, the envelope and the gate. */
async function runOnce(right: boolean) {
  const store = tempDir();
  const r = await loopgate(["run", nodeTestTask(right), "--noop", "--json", "--store", store], {
    timeoutMs: 120_000,
  });
  const env = parseStdout<Envelope>(r);
  const gate = (env.gates as Gate[]).find((g) => g.id === "unit");
  if (!gate) throw new Error(`no gate unit in ${show(r)}`);
  return { r, store, env, gate };
}

/** The gate's log as the runner wrote it, from the event log (not from the envelope, which marks it). */
async function recordedLog(store: string, runId: string): Promise<string> {
  const r = await loopgate(["events", runId, "--store", store, "--json"]);
  const finished = r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; data: { gate_id?: string; log_excerpt?: string } })
    .find((e) => e.type === "gate_run_finished" && e.data.gate_id === "unit");
  return finished?.data.log_excerpt ?? "";
}

/** Whether a log line names the test `name` as a whole name (not a prefix of a longer one). */
const names = (line: string, name: string) =>
  new RegExp(`(^|[^\\w])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}([^\\w]|$)`).test(line);

describe.concurrent("loopgate's canary, marked as loopgate's", () => {
  it("a passed node --test gate: exit 1 is explained as the canary's, in the envelope, status and reports", async () => {
    const { r, store, env, gate } = await runOnce(true);
    expect(r.code, show(r)).toBe(0);
    expect(env.status).toBe("SUCCESS");
    expect(gate.passed).toBe(true);
    // node --test exits 1 when any test fails; the canary is one, so a passing gate exits 1.
    expect(gate.exit_code).toBe(1);
    const canary = gate.tamper?.canary;
    expect(canary).toMatchObject({ auto: true, failed_as_expected: true });
    expect(canary?.tests).toHaveLength(1);
    const name = canary?.tests?.[0] ?? "";
    expect(REAL).not.toContain(name);

    // The runner's own output names the canary as a failing test (`✖`), and the real tests as passed.
    const raw = await recordedLog(store, env.run_id);
    expect(raw.split("\n").some((l) => l.includes("✖") && names(l, name))).toBe(true);
    for (const real of REAL)
      expect(raw.split("\n").some((l) => l.includes("✔") && names(l, real))).toBe(true);
    // What a builder's required fix would quote is not marked.
    expect(raw).not.toContain(MARK);

    // The envelope's log marks exactly the lines naming the canary, and only those.
    const lines = gate.log_excerpt.split("\n");
    const marked = lines.filter((l) => l.startsWith(MARK));
    expect(marked.length).toBeGreaterThan(0);
    for (const l of lines) expect(l.startsWith(MARK), l).toBe(names(l, name));
    for (const l of marked) for (const real of REAL) expect(names(l, real), l).toBe(false);
    expect(lines.map((l) => (l.startsWith(MARK) ? l.slice(MARK.length) : l)).join("\n")).toBe(raw);

    const note = gate.exit_code_note ?? "";
    expect(note).toContain("exit 1");
    expect(note).toContain(`loopgate's canary test ${JSON.stringify(name)}`);
    expect(note).toContain("as expected");

    const status = await loopgate(["status", env.run_id, "--store", store]);
    expect(status.code, show(status)).toBe(0);
    expect(status.stdout).toMatch(/✓ unit\n/);
    expect(status.stdout).toContain(note);

    const dir = tempDir();
    const [md, junit] = [join(dir, "summary.md"), join(dir, "junit.xml")];
    const rep = await loopgate(["report", env.run_id, "--store", store, "--markdown", md, "--junit", junit]);
    expect(rep.code, show(rep)).toBe(0);
    const row = readFileSync(md, "utf8")
      .split("\n")
      .find((l) => l.startsWith("| unit |"));
    expect(row).toContain("✅ passed");
    expect(row).toContain(`exit 1 from loopgate's canary test "${name}"`);
    const xml = readFileSync(junit, "utf8");
    expect(xml).toContain(`<testcase name="unit"`);
    expect(xml).toContain(`<system-out>exit 1 from loopgate's canary test "${name}"`);
    expect(xml).not.toMatch(/<failure|<error/);
  }, 180_000);

  it("a gate whose real test fails is a failure: the note names the real failure, not the canary alone", async () => {
    const { r, store, env, gate } = await runOnce(false);
    expect(r.code, show(r)).toBe(1);
    expect(env.status).toBe("ESCALATED");
    expect(gate.passed).toBe(false);
    expect(gate.exit_code).toBe(1);
    // add(2, 3) is -1 and add(2, -3) is 5 with a - b: both real tests fail.
    expect(gate.tamper?.tests?.failed).toBe(2);
    const name = gate.tamper?.canary.tests?.[0] ?? "";
    const note = gate.exit_code_note ?? "";
    expect(note).toMatch(/^exit 1: 2 real tests failed/);
    expect(note).not.toContain("every real test passed");

    // The real failing tests' lines stay unmarked; the canary's are marked.
    const lines = gate.log_excerpt.split("\n");
    for (const real of REAL) {
      const failing = lines.filter((l) => l.includes("✖") && names(l, real));
      expect(failing.length, real).toBeGreaterThan(0);
      for (const l of failing) expect(l.startsWith(MARK), l).toBe(false);
    }
    expect(lines.some((l) => l.startsWith(MARK) && names(l, name))).toBe(true);

    const status = await loopgate(["status", env.run_id, "--store", store]);
    expect(status.code, show(status)).toBe(1);
    expect(status.stdout).toMatch(/✗ unit\n/);
    expect(status.stdout).toContain(note);
    expect(status.stdout).not.toContain("every real test passed");

    const dir = tempDir();
    const [md, junit] = [join(dir, "summary.md"), join(dir, "junit.xml")];
    const rep = await loopgate(["report", env.run_id, "--store", store, "--markdown", md, "--junit", junit]);
    expect(rep.code, show(rep)).toBe(1);
    const row = readFileSync(md, "utf8")
      .split("\n")
      .find((l) => l.startsWith("| unit |"));
    expect(row).toContain("❌ failed");
    expect(row).toContain("2 real tests failed");
    const xml = readFileSync(junit, "utf8");
    expect(xml).toMatch(
      /<testcase name="unit"[^>]*>\s*<failure type="gate_failed" message="gate unit did not pass \(exit 1: 2 real tests failed/,
    );
  }, 180_000);
});
