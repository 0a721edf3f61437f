// Hostile strings as a user meets them: a file name made of terminal escapes cannot draw on the
// screen, `loopgate runs | head -1` ends quietly, and `status` of an unfinished run does not exit 0.
import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { BIN, loopgate, removeTemps, show, tempDir, writeTask } from "./cli.js";

afterAll(removeTemps);

/** Whether text holds a raw ESC or CSI: what could move a terminal's cursor or clear its screen. */
const drives = (s: string) => s.includes("\u001b") || s.includes("\u009b");

const at = (i: number) => new Date(Date.UTC(2026, 11, 1, 0, 0, i)).toISOString();
const started = (taskId: string) => ({
  type: "run_started",
  data: {
    task_id: taskId,
    task_path: "/t/task.yaml",
    task_digest: "d",
    builder: { kind: "noop" },
    max_attempts: 1,
    gates: [{ id: "g", kind: "subprocess" }],
    sandbox: "none",
    run_dir: "/r",
  },
});

/** Writes runs straight into a store: `finished` ones get a verdict whose reason is `reason`. */
async function storeWith(runs: { id: string; reason?: string }[]): Promise<string> {
  const dir = tempDir();
  const store = SqliteEventStore.open(join(dir, "events.db"));
  let n = 0;
  for (const r of runs) {
    const events: unknown[] = [{ ...started("t"), id: `e${++n}`, meta: { at: at(n), origin: "runtime" } }];
    if (r.reason !== undefined)
      events.push(
        {
          type: "infrastructure_failed",
          data: { attempt: 0, reason: r.reason },
          id: `e${++n}`,
          meta: { at: at(n), origin: "runtime" },
        },
        {
          type: "run_finished",
          data: { status: "TOOL_FAILURE", reason: r.reason },
          id: `e${++n}`,
          meta: { at: at(n), origin: "runtime" },
        },
      );
    // biome-ignore lint/suspicious/noExplicitAny: raw events, validated by the store itself
    await store.append(`run-${r.id}`, events as any, "no_stream");
  }
  await store.close();
  return dir;
}

describe("status of a run that has not finished", () => {
  it("exits 3, not 0, and says how to continue it", async () => {
    const store = await storeWith([{ id: "20261201-000000-abcdef" }]);
    const r = await loopgate(["status", "20261201-000000-abcdef", "--store", store]);
    expect(r.code, show(r)).toBe(3);
    expect(r.stdout).toContain("RUNNING");
    // No lease in this log (a run from an older loopgate): status says so and how to continue it.
    expect(r.stdout).toContain("not finished");
    // As the user started it (here `node bin/loopgate.js`), with the run's id.
    expect(r.stdout).toMatch(/loopgate(\.js)? resume 20261201-000000-abcdef/);
    const j = await loopgate(["status", "20261201-000000-abcdef", "--store", store, "--json"]);
    expect(j.code).toBe(3);
    expect(JSON.parse(j.stdout)).toMatchObject({ status: "RUNNING", finished: false });
  });
});

describe("human output is inert", () => {
  it("a file name of terminal escapes and a fake SUCCESS banner is printed escaped", async () => {
    const task = writeTask(
      `id: inert\nprompt: p\nworkspace: ./repo\ngates:\n  - id: g\n    run: ["true"]\nbudget: { attempts: 1 }\n`,
    );
    const builder = join(tempDir(), "builder.sh");
    // A FIFO is a blocking finding, so its name is shown in progress, in the envelope and in `events`.
    writeFileSync(
      builder,
      `#!/bin/sh\nmkfifo "$(printf 'x\\033[2J\\033[H\\033[32mSUCCESS · run fake · all gates passed\\033[0m\\302\\233K')"\nmkfifo "$(printf 'y\\nSUCCESS · run fake2 · task inert · 1 attempt(s)')"\n`,
    );
    chmodSync(builder, 0o755);
    const store = tempDir();
    const r = await loopgate(["run", task, "--builder", builder, "--store", store]);
    expect(r.code, show(r)).toBe(1);
    const all = r.stdout + r.stderr;
    expect(all).toContain("unsupported_entry");
    expect(all).toContain("x\\x1b[2J\\x1b[H\\x1b[32mSUCCESS · run fake");
    expect(all).toContain("\\u009bK");
    expect(all).toContain("y\\nSUCCESS · run fake2");
    // Nothing that could move the cursor, clear the screen or start a line of its own reaches the terminal.
    expect(drives(all)).toBe(false);
    expect(all.split("\n").filter((l) => l.startsWith("SUCCESS"))).toEqual([]);
    const runId = /run (\d{8}-\d{6}-[0-9a-f]+)/.exec(all)?.[1] ?? "";
    for (const cmd of ["status", "events", "runs"]) {
      const o = await loopgate(cmd === "runs" ? [cmd, "--store", store] : [cmd, runId, "--store", store]);
      expect(drives(o.stdout), `${cmd}: ${show(o)}`).toBe(false);
      expect(
        o.stdout.split("\n").filter((l) => l.startsWith("SUCCESS")),
        cmd,
      ).toEqual([]);
    }
    // --json stays valid JSON and keeps the name exactly.
    const j = await loopgate(["status", runId, "--store", store, "--json"]);
    const env = JSON.parse(j.stdout) as { findings: { path?: string }[] };
    expect(env.findings.map((f) => f.path)).toContain(
      "x\u001b[2J\u001b[H\u001b[32mSUCCESS · run fake · all gates passed\u001b[0m\u009bK",
    );
  });

  it("`loopgate runs | head -1` ends quietly with exit 0", async () => {
    // Enough output (40 runs of 4,000-character reasons) that `head` closes the pipe mid-write.
    const store = await storeWith(
      Array.from({ length: 40 }, (_, i) => ({
        id: `20261201-0000${String(i).padStart(2, "0")}-abcdef`,
        reason: `reason ${i} ${"r".repeat(3990)}`,
      })),
    );
    const errFile = join(tempDir(), "stderr.txt");
    const r = spawnSync(
      "bash",
      [
        "-c",
        `"${process.execPath}" "${BIN}" runs --store "${store}" --limit 100 2>"${errFile}" | head -1; echo "exit=\${PIPESTATUS[0]}"`,
      ],
      { encoding: "utf8" },
    );
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^20261201-0000\d\d-abcdef {2}TOOL_FAILURE/);
    expect(lines[1]).toBe("exit=0");
    expect(spawnSync("cat", [errFile], { encoding: "utf8" }).stdout).toBe("");
  });
});
