// Each command's flags are checked by its own schema before it runs: a foreign flag or a bad value is
// refused with exit 2, naming the flag and the command, and nothing is recorded.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exampleTask, loopgate, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);
const TASK = exampleTask("js-slugify");
// How loopgate() starts the CLI (`node ROOT/bin/loopgate.js` from ROOT): errors name the command that way.
const ME = "node bin/loopgate.js";

describe.concurrent("per-command flag schemas", () => {
  it("`runs --model x` is refused, naming --model and the command", async () => {
    const store = tempDir();
    const r = await loopgate(["runs", "--model", "x", "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      "--model applies only to loopgate run, submit, goal, scheduler, todo, not to loopgate runs",
    );
  });

  it("a value its check refuses names the flag, what it wants and the command", async () => {
    const r = await loopgate(["runs", "--limit", "0", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain(`--limit: expected a positive whole number (1 or more), got "0" (${ME} runs)`);
    const h = await loopgate(["health", "--days", "1.5", "--store", tempDir()]);
    expect(h.code, show(h)).toBe(2);
    expect(h.stderr).toContain(
      `--days: expected a positive whole number (1 or more), got "1.5" (${ME} health)`,
    );
  });

  it("--max-attempts past its bound is refused before any run is recorded", async () => {
    const store = tempDir();
    const r = await loopgate(["run", TASK, "--noop", "--max-attempts", "101", "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain(`--max-attempts: expected at most 100, got "101" (${ME} run)`);
    expect(existsSync(join(store, "events.db"))).toBe(false);
  });

  it("a flag of run given to verify or task check is refused, naming which command takes it", async () => {
    const v = await loopgate(["verify", TASK, "--workspace", tempDir(), "--model", "scripted:x.yaml"]);
    expect(v.code, show(v)).toBe(2);
    expect(v.stderr).toContain(
      "--model applies only to loopgate run, submit, goal, scheduler, todo, not to loopgate verify",
    );
    const t = await loopgate(["task", "check", TASK, "--case", "c.yaml"]);
    expect(t.code, show(t)).toBe(2);
    expect(t.stderr).toContain("--case applies only to loopgate run, not to loopgate task");
  });
});
