// A new user's first builder: scripts next to them start, what cannot start says so at once, and the
// output says why a gate failed (`loopgate run … --builder`, `task check`, `--verbose`).
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loopgate, removeTemps, show, tempDir, writeTask } from "./cli.js";

afterAll(removeTemps);

// greeting.txt must read "hi"; the gate says which line is wrong, as a test runner would.
const CHECK = `grep -qx hi greeting.txt || { echo "ok 1 - file exists"; echo "not ok 2 - greeting is $(cat greeting.txt), expected hi"; exit 1; }`;
const greetingTask = (oracle?: string) =>
  writeTask(
    [
      "id: greeting",
      "prompt: Make greeting.txt say hi.",
      "workspace: ./repo",
      "gates:",
      `  - { id: visible-tests, run: ["sh", "-c", ${JSON.stringify(CHECK)}], timeout: 10s }`,
      "budget: { attempts: 3 }",
      ...(oracle !== undefined ? ["oracle: ./solution.sh"] : []),
      "",
    ].join("\n"),
    oracle !== undefined ? { oracle } : {},
  );

/** A folder of the user's own with an agent script in it, as they would run it: `bash ./my-agent.sh`. */
function userFolder(script: string): string {
  const dir = tempDir("loopgate-e2e-user-");
  writeFileSync(join(dir, "my-agent.sh"), script);
  return dir;
}

describe.concurrent("builders that start, and builders that cannot", () => {
  it("`bash ./my-agent.sh {prompt}` from the folder holding it runs on attempt 1", async () => {
    const task = greetingTask();
    const cwd = userFolder('echo hi > greeting.txt\necho "fixed: $1" | head -c 40\n');
    const r = await loopgate(
      ["run", task, "--builder", "bash ./my-agent.sh {prompt}", "--store", tempDir()],
      {
        cwd,
      },
    );
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toMatch(/^SUCCESS .* 1 attempt/m);
  });

  it("a script that is nowhere: TOOL_FAILURE after one attempt, naming it and the fix", async () => {
    const task = greetingTask();
    const r = await loopgate(["run", task, "--builder", "bash ./not-there.sh", "--store", tempDir()], {
      cwd: tempDir(),
    });
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toMatch(/^TOOL_FAILURE .* 1 attempt/m);
    expect(r.stdout).toContain("not-there.sh");
    expect(r.stdout).toContain("--builder-mount");
  });

  it("a --builder-mount that does not exist: TOOL_FAILURE naming it, and the builder never ran", async () => {
    const task = greetingTask();
    const missing = join(tempDir(), "no-such-install");
    const r = await loopgate(
      ["run", task, "--builder", "sh -c 'echo hi > greeting.txt'", "--builder-mount", missing, "--json"],
      { cwd: dirname(task) },
    );
    expect(r.code, show(r)).toBe(2);
    const env = JSON.parse(r.stdout) as { status: string; reason: string; attempts: number };
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain(missing);
    expect(env.attempts).toBe(0);
  });

  it("a {promt} typo is bad input (exit 2) naming it and the known placeholders; no run is recorded", async () => {
    const task = greetingTask();
    const store = join(tempDir(), "store");
    const r = await loopgate(["run", task, "--builder", "sh -c 'echo hi' {promt}", "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("{promt}");
    expect(r.stderr).toContain("{prompt}, {prompt_file}, {required_fix}, {workspace}");
    expect(existsSync(join(store, "runs"))).toBe(false);
  });

  it("task check: an oracle that reads a file beside it is accepted", async () => {
    const task = greetingTask('#!/bin/sh\ncp "$(dirname "$0")/answer.txt" greeting.txt\n');
    writeFileSync(join(dirname(task), "answer.txt"), "hi\n");
    const r = await loopgate(["task", "check", task, "--store", tempDir()]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain("oracle: SUCCESS");
  });

  it("task check: an oracle that cannot start is a TOOL_FAILURE, not 'the gates reject a correct solution'", async () => {
    const task = greetingTask("#!/bin/sh\nno-such-tool-4410 --fix\n");
    const r = await loopgate(["task", "check", task, "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toContain("could not be judged (TOOL_FAILURE");
    expect(r.stdout).not.toContain("reject a correct solution");
  });
});

describe.concurrent("saying why", () => {
  it("the human output of a failed gate shows the failing lines of its log", async () => {
    const task = greetingTask();
    const r = await loopgate(["run", task, "--noop", "--max-attempts", "1", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(1);
    expect(r.stdout).toContain("  ✗ visible-tests\n      | not ok 2 - greeting is hello, expected hi\n");
  });

  it("off a terminal, progress prints a line per phase", async () => {
    const task = greetingTask();
    const cwd = userFolder("echo working\necho hi > greeting.txt\n");
    const r = await loopgate(["run", task, "--builder", "sh ./my-agent.sh", "--store", tempDir()], { cwd });
    expect(r.code, show(r)).toBe(0);
    const phases = r.stderr.split("\n").filter((l) => l.startsWith("  "));
    expect(phases[0]).toMatch(/^ {2}builder started: sh .*my-agent\.sh$/);
    expect(phases[1]).toMatch(/^ {2}builder exited 0 after /);
    expect(phases[2]).toBe("  gate visible-tests started");
    expect(phases[3]).toMatch(/^ {2}✓ gate visible-tests .* passed$/);
    expect(r.stderr).not.toContain("builder| ");
  });

  it("--verbose (and --follow) streams the builder's and the gates' output live, prefixed", async () => {
    const task = greetingTask();
    const cwd = userFolder('for i in 1 2 3; do echo "working $i"; done\n');
    for (const flag of ["--verbose", "--follow"]) {
      const r = await loopgate(
        ["run", task, "--builder", "bash ./my-agent.sh", "--max-attempts", "1", flag, "--store", tempDir()],
        { cwd },
      );
      expect(r.code, show(r)).toBe(1);
      const lines = r.stderr.split("\n");
      const b = lines.indexOf("builder| working 1");
      expect(lines.slice(b, b + 3), r.stderr).toEqual([
        "builder| working 1",
        "builder| working 2",
        "builder| working 3",
      ]);
      expect(lines.indexOf("gate visible-tests| not ok 2 - greeting is hello, expected hi")).toBeGreaterThan(
        b,
      );
    }
  });
});
