import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  BIN,
  exampleDir,
  exampleTask,
  loopgate,
  parseStdout,
  ROOT,
  removeTemps,
  show,
  tempDir,
} from "./cli.js";

type Ev = { type: string; data: Record<string, unknown> };
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  removeTemps();
});

async function eventsOf(store: string, runId: string): Promise<Ev[]> {
  const r = await loopgate(["events", runId, "--store", store, "--json"]);
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Ev);
}

/** What a second process must not change: every event but the owner's own heartbeats. */
const facts = (events: Ev[]) => events.filter((e) => e.type !== "run_lease_renewed");

/**
 * Starts a run whose builder (the reference fix) first sleeps while LEASE_TEST_SLOW=1, and resolves once the
 * builder is running; the run is then live, held by the returned process.
 */
async function startSlowRun(): Promise<{ child: ChildProcess; store: string; runId: string }> {
  const dir = tempDir();
  const store = join(dir, "store");
  const solution = readFileSync(join(exampleDir("js-slugify"), "solution.sh"), "utf8").replace(/^#!.*\n/, "");
  const script = join(dir, "builder.sh");
  writeFileSync(
    script,
    `#!/bin/sh\nif [ "$LEASE_TEST_SLOW" = 1 ]; then echo sleeping; sleep 300; fi\n${solution}`,
  );
  chmodSync(script, 0o755);
  const child = spawn(
    process.execPath,
    [
      BIN,
      "run",
      exampleTask("js-slugify"),
      "--builder",
      script,
      "--builder-env",
      "LEASE_TEST_SLOW",
      "--store",
      store,
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LEASE_TEST_SLOW: "1" } },
  );
  children.push(child);
  await new Promise<void>((res, rej) => {
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (stderr.includes("attempt 1/")) res();
    });
    child.on("close", (code) => rej(new Error(`the run ended early (exit ${code}):\n${stderr}`)));
  });
  const runs = parseStdout<{ run_id: string }[]>(await loopgate(["runs", "--store", store, "--json"]));
  return { child, store, runId: runs[0]?.run_id ?? "" };
}

describe("a run has an owner", () => {
  it("resume of a live run is refused, names the owner, and leaves the run untouched", async () => {
    const { child, store, runId } = await startSlowRun();
    const before = await eventsOf(store, runId);
    const resumed = await loopgate(["resume", runId, "--store", store, "--json"], {
      env: { LEASE_TEST_SLOW: "0" },
    });
    expect(resumed.code, show(resumed)).toBe(2);
    expect(resumed.stderr).toContain(`is being driven by process ${child.pid} on host`);
    expect(resumed.stderr).toContain("its lease runs until");
    expect(resumed.stdout).toBe("");
    expect(before.filter((e) => e.type === "run_lease_taken")).toHaveLength(1);
    // Nothing appended, nothing rolled back, and the owner still runs.
    expect(facts(await eventsOf(store, runId))).toEqual(facts(before));
    expect(child.exitCode).toBeNull();
    const status = await loopgate(["status", runId, "--store", store]);
    expect(status.stdout, show(status)).toContain(`owner: process ${child.pid} on host`);
    expect(status.stdout).toContain(", alive ·");
    child.kill("SIGKILL");
  });

  it("after SIGKILL, status says the owner is gone and resume takes the run over and finishes it", async () => {
    const { child, store, runId } = await startSlowRun();
    const killedPid = child.pid;
    await new Promise((res) => {
      child.on("close", res);
      child.kill("SIGKILL");
    });
    const status = await loopgate(["status", runId, "--store", store, "--json"]);
    const info = parseStdout<{ status: string; owner: { pid: number; alive: boolean }; hint: string }>(
      status,
    );
    expect(info.status).toBe("RUNNING");
    expect(info.owner).toMatchObject({ pid: killedPid, alive: false });
    // As the user started it (here `node bin/loopgate.js`), with the run's id.
    expect(info.hint).toMatch(new RegExp(`loopgate(\\.js)? resume ${runId}`));
    const resumed = await loopgate(
      ["resume", runId, "--store", store, "--builder-env", "LEASE_TEST_SLOW", "--json"],
      { env: { LEASE_TEST_SLOW: "0" } },
    );
    expect(resumed.code, show(resumed)).toBe(0);
    expect(parseStdout<{ status: string }>(resumed).status).toBe("SUCCESS");
    const taken = (await eventsOf(store, runId)).filter((e) => e.type === "run_lease_taken");
    expect(taken).toHaveLength(2);
    expect(taken[1]?.data.previous).toMatchObject({ pid: killedPid, reason: "owner_gone" });
    expect(taken[1]?.data.owner).not.toMatchObject({ pid: killedPid });
  });
});
