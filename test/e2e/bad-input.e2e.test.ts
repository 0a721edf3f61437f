// Bad input exits 2 with a specific message (docs/reference/cli.md: exit codes; docs/architecture.md, invariant 10), and prints no envelope.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type Envelope,
  exampleTask,
  loopgate,
  parseStdout,
  removeTemps,
  show,
  tempDir,
  writeTask,
} from "./cli.js";

afterAll(removeTemps);

const TASK = exampleTask("js-slugify");

describe.concurrent("bad input", () => {
  it("a task file with `timeout: soon` is refused with file:line and the field path", async () => {
    const yaml = [
      "id: bad-timeout",
      "prompt: change greeting.txt",
      "workspace: ./repo",
      "gates:",
      "  - id: greets",
      '    run: ["true"]',
      "    timeout: soon",
      "",
    ].join("\n");
    const file = writeTask(yaml);
    const line = yaml.split("\n").findIndex((l) => l.includes("timeout: soon")) + 1;
    const r = await loopgate(["run", file, "--noop", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`${file}:${line}: gates[0].timeout`);
  });

  it("a missing task file is refused, naming the file", async () => {
    const missing = join(tempDir(), "nope", "task.yaml");
    const r = await loopgate(["run", missing, "--noop", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(missing);
  });

  it("an unknown flag is refused, naming the flag", async () => {
    const r = await loopgate(["run", TASK, "--noop", "--frobnicate", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("--frobnicate");
  });

  it("an unknown command is refused, naming it", async () => {
    const r = await loopgate(["frobnicate"]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("frobnicate");
  });

  it("`run` without a builder choice is refused, naming the three choices", async () => {
    const store = tempDir();
    const r = await loopgate(["run", TASK, "--json", "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    for (const flag of ["--builder", "--oracle", "--noop"]) expect(r.stderr).toContain(flag);
    expect(existsSync(join(store, "events.db"))).toBe(false);
  });

  it("`run` with two builder choices is refused", async () => {
    const r = await loopgate(["run", TASK, "--noop", "--oracle", "--json", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    for (const flag of ["--builder", "--oracle", "--noop"]) expect(r.stderr).toContain(flag);
  });

  it("--max-attempts 0 is refused, naming the flag", async () => {
    const r = await loopgate(["run", TASK, "--noop", "--max-attempts", "0", "--json", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("--max-attempts");
  });

  it("a builder command with a shell operator is refused, not run through a shell", async () => {
    const store = tempDir();
    const r = await loopgate(["run", TASK, "--builder", "a | b", "--json", "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("--builder");
    expect(r.stderr).toContain("|");
  });

  it("a stray extra argument is refused rather than silently ignored", async () => {
    const r = await loopgate(["run", TASK, "other-task.yaml", "--noop", "--json", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("other-task.yaml");
  });

  it("--builder-env with something that is not a variable name is refused", async () => {
    const r = await loopgate(["run", TASK, "--noop", "--builder-env", "NOT A NAME", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("--builder-env");
    expect(r.stderr).toContain("NOT A NAME");
  });

  it("--builder-mount of the task folder is refused: it would expose the held-out tests", async () => {
    const dir = join(TASK, "..");
    const r = await loopgate(["run", TASK, "--noop", "--builder-mount", dir, "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("--builder-mount");
    expect(r.stderr).toContain(join(dir, "heldout"));
  });

  it("`runs --limit` with something that is not a positive whole number is refused", async () => {
    for (const limit of ["abc", "0"]) {
      const r = await loopgate(["runs", "--limit", limit, "--store", tempDir()]);
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toContain("--limit");
    }
  });

  it("`verify` without --workspace is refused, naming the flag", async () => {
    const r = await loopgate(["verify", TASK, "--json", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("--workspace");
  });

  it("`status` of a run id in a store folder that holds no log names the run id and the folder", async () => {
    const store = join(tempDir(), "empty-store");
    const r = await loopgate(["status", "20200101-000000-abcdef", "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("20200101-000000-abcdef");
    expect(r.stderr).toContain(store);
  });

  it("a gate whose program is not installed makes the run a TOOL_FAILURE naming the program", async () => {
    const file = writeTask(
      [
        "id: missing-gate-tool",
        "prompt: change greeting.txt",
        "workspace: ./repo",
        "gates:",
        "  - id: lint",
        '    run: ["no-such-tool-xyz", "--check"]',
        "",
      ].join("\n"),
    );
    const r = await loopgate(["run", file, "--noop", "--json", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("no-such-tool-xyz");
  });
});
