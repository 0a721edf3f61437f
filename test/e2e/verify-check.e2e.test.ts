// `loopgate verify` (work produced elsewhere) and `loopgate task check` (do the gates discriminate?).
import { execFile } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  copyExample,
  type Envelope,
  EXAMPLES,
  exampleDir,
  exampleTask,
  loopgate,
  parseStdout,
  removeTemps,
  show,
  tempDir,
  writeTask,
} from "./cli.js";

afterAll(removeTemps);

interface CheckResult {
  task_id: string;
  ok: boolean;
  problems: string[];
}

/** A copy of an example's starting workspace, optionally with its reference solution applied. */
async function workspaceCopy(withFix: boolean): Promise<string> {
  const dir = tempDir("loopgate-e2e-work-");
  cpSync(join(exampleDir("js-slugify"), "repo"), dir, { recursive: true });
  if (withFix) await promisify(execFile)("sh", [join(exampleDir("js-slugify"), "solution.sh")], { cwd: dir });
  return dir;
}

const greetingTask = (id: string, gateArgv: string) =>
  writeTask(
    [
      `id: ${id}`,
      "prompt: change greeting.txt",
      "workspace: ./repo",
      "gates:",
      "  - id: only-gate",
      `    run: ${gateArgv}`,
      "budget: { attempts: 1 }",
      "oracle: ./solution.sh",
      "",
    ].join("\n"),
    { oracle: "#!/bin/sh\necho 'hello, world' > greeting.txt\n" },
  );

describe.concurrent("loopgate verify", () => {
  it("accepts a workspace with the reference fix applied (exit 0)", async () => {
    const r = await loopgate([
      "verify",
      exampleTask("js-slugify"),
      "--workspace",
      await workspaceCopy(true),
      "--json",
      "--store",
      tempDir(),
    ]);
    expect(r.code, show(r)).toBe(0);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("SUCCESS");
    expect(env.attempts).toBe(1);
  });

  it("rejects an untouched copy of the starting workspace (exit 1)", async () => {
    const r = await loopgate([
      "verify",
      exampleTask("js-slugify"),
      "--workspace",
      await workspaceCopy(false),
      "--json",
      "--store",
      tempDir(),
    ]);
    expect(r.code, show(r)).toBe(1);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("ESCALATED");
    expect(env.attempts).toBe(1);
    expect(env.gates.some((g) => !g.passed)).toBe(true);
  });
});

describe.concurrent("loopgate task check", () => {
  for (const name of EXAMPLES)
    it(`finds the ${name} example sound (exit 0, ok)`, async () => {
      const r = await loopgate(["task", "check", copyExample(name), "--json", "--store", tempDir()]);
      expect(r.code, show(r)).toBe(0);
      const res = parseStdout<CheckResult>(r);
      expect(res.ok).toBe(true);
      expect(res.problems).toEqual([]);
    });

  it("flags a task whose only gate always passes: the no-op reached SUCCESS", async () => {
    const r = await loopgate([
      "task",
      "check",
      greetingTask("always-passes", '["true"]'),
      "--json",
      "--store",
      tempDir(),
    ]);
    expect(r.code, show(r)).toBe(1);
    const res = parseStdout<CheckResult>(r);
    expect(res.ok).toBe(false);
    expect(
      res.problems.some((p) => /no-op/i.test(p) && p.includes("SUCCESS")),
      res.problems.join("\n"),
    ).toBe(true);
  });

  it("flags a task whose only gate always fails: the oracle did not reach SUCCESS", async () => {
    const r = await loopgate([
      "task",
      "check",
      greetingTask("always-fails", '["false"]'),
      "--json",
      "--store",
      tempDir(),
    ]);
    expect(r.code, show(r)).toBe(1);
    const res = parseStdout<CheckResult>(r);
    expect(res.ok).toBe(false);
    expect(
      res.problems.some((p) => /oracle/i.test(p)),
      res.problems.join("\n"),
    ).toBe(true);
  });

  it("prints a readable verdict without --json", async () => {
    const r = await loopgate([
      "task",
      "check",
      greetingTask("always-passes-human", '["true"]'),
      "--store",
      tempDir(),
    ]);
    expect(r.code, show(r)).toBe(1);
    expect(r.stdout).toMatch(/no-op/i);
  });
});
