import { spawn } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, exampleTask, loopgate, parseStdout, ROOT, removeTemps, tempDir } from "./cli.js";

afterAll(removeTemps);

describe("interrupting a run", () => {
  it("Ctrl-C kills the builder, records the run as TOOL_FAILURE and exits 2", async () => {
    const dir = tempDir();
    const store = join(dir, "store");
    const marker = `loopgate-slow-${process.pid}`;
    const script = join(dir, "slow.sh");
    writeFileSync(script, `#!/bin/sh\necho started ${marker}\nsleep 60\necho finished\n`);
    chmodSync(script, 0o755);
    const child = spawn(
      process.execPath,
      [BIN, "run", exampleTask("js-slugify"), "--builder", script, "--store", store],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (d.includes("attempt 1/")) setTimeout(() => child.kill("SIGINT"), 500);
    });
    const started = Date.now();
    const code = await new Promise<number | null>((res) => child.on("close", (c) => res(c)));
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(code).toBe(2);
    expect(stderr).toContain("SIGINT");
    const runs = parseStdout<{ run_id: string; status: string; reason: string }[]>(
      await loopgate(["runs", "--store", store, "--json"]),
    );
    expect(runs).toHaveLength(1);
    expect(runs[0]?.status).toBe("TOOL_FAILURE");
    expect(runs[0]?.reason).toContain("interrupted (SIGINT)");
    const events = (await loopgate(["events", runs[0]?.run_id ?? "", "--store", store, "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).type);
    // The killed builder has no result of its own (a resume re-runs it from the rolled-back workspace).
    expect(events).not.toContain("builder_finished");
    expect(events.at(-1)).toBe("run_finished");
    expect(events).not.toContain("gate_run_finished");
  });
});
