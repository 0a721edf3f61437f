// Task files that cannot protect what they name: a protected glob that matches
// nothing is an error in `task check` and a warning at `run`; one that does not compile is a load error.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Envelope, loopgate, parseStdout, removeTemps, show, tempDir, writeTask } from "./cli.js";

afterAll(removeTemps);

/** A task whose tests live in tests/, protected with the given globs. */
function task(protectedGlobs: string): string {
  const file = writeTask(
    [
      "id: glob-typo",
      "prompt: make greeting.txt say hello, world",
      "workspace: ./repo",
      `protected: ${protectedGlobs}`,
      "gates:",
      "  - id: greets",
      '    run: ["sh", "tests/check.sh"]',
      "budget: { attempts: 1 }",
      "oracle: ./solution.sh",
      "",
    ].join("\n"),
    { oracle: "#!/bin/sh\necho 'hello, world' > greeting.txt\n" },
  );
  const tests = join(dirname(file), "repo", "tests");
  mkdirSync(tests);
  writeFileSync(join(tests, "check.sh"), "grep -q 'hello, world' greeting.txt\n");
  return file;
}

const MESSAGE = "protected glob test/** matches nothing in repo/; did you mean tests/**?";

describe.concurrent("protected globs", () => {
  it("task check refuses a protected glob that matches nothing, naming it and the folder meant", async () => {
    const file = task('["test/**"]');
    const r = await loopgate(["task", "check", file, "--store", tempDir()]);
    expect(r.code, show(r)).toBe(1);
    expect(r.stdout).toContain("NOT ok:");
    expect(r.stdout).toContain(MESSAGE);
    const j = await loopgate(["task", "check", file, "--json", "--store", tempDir()]);
    expect(j.code, show(j)).toBe(1);
    expect(parseStdout<{ ok: boolean; problems: string[] }>(j)).toMatchObject({
      ok: false,
      problems: [MESSAGE],
    });
  });

  it("task check accepts the corrected glob", async () => {
    const r = await loopgate(["task", "check", task('["tests/**"]'), "--store", tempDir()]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).not.toContain("matches nothing");
  });

  it("run warns on stderr and records a warning finding, without failing the run for it", async () => {
    const r = await loopgate(["run", task('["test/**"]'), "--oracle", "--json", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stderr).toContain(`warning: ${MESSAGE}`);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("SUCCESS");
    expect(env.findings).toContainEqual({
      attempt: 1,
      code: "protected_glob_matches_nothing",
      severity: "warning",
      detail: MESSAGE,
    });
  });

  it("a protected glob that does not compile is a load error with file:line:field", async () => {
    const file = task('\n  - "tests/**"\n  - "tests/[**"');
    for (const args of [
      ["task", "check", file],
      ["run", file, "--noop"],
    ]) {
      const r = await loopgate([...args, "--store", tempDir()]);
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toMatch(
        /task\.yaml:6: protected\[1\]: not a valid glob "tests\/\[\*\*": the \[ at column 7 is never closed \(expected \]\)/,
      );
    }
  });
});
