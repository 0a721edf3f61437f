import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTree } from "../support/run-tree.js";
import {
  exampleDir,
  exampleTask,
  loopgate,
  parseStdout,
  removeTemps,
  show,
  tempDir,
  withoutCanaryNames,
} from "./cli.js";

// Kill a scripted agent run with SIGKILL right after its N-th event, resume it, and compare with a run
// that was never interrupted: same envelope, same events apart from the resume's own.
const script = `scripted:${join(exampleDir("js-slugify"), "agent/honest.yaml")}`;
const task = exampleTask("js-slugify");
type Ev = { type: string; data: Record<string, unknown>; meta: { origin: string } };

/** What must match between runs: types, origins and data, less timings, ids, paths and raw tool output. */
function normalize(events: Ev[]): unknown[] {
  const drop = new Set(["duration_ms", "content", "log_excerpt", "run_dir"]);
  return (
    events
      // A resume's own facts (and who held the lease when) differ from a run never interrupted.
      .filter((e) => e.type !== "run_resumed" && !e.type.startsWith("run_lease_"))
      .map((e) => ({
        type: e.type,
        origin: e.meta.origin,
        data: withoutCanaryNames(Object.fromEntries(Object.entries(e.data).filter(([k]) => !drop.has(k)))),
      }))
  );
}

function comparable(env: Record<string, unknown>): unknown {
  const {
    run_id: _id,
    audit,
    gates,
    ...rest
  } = env as { run_id: string; audit: Record<string, unknown>; gates: Record<string, unknown>[] };
  const { latency_ms: _l, event_count: _c, ...auditRest } = audit;
  return {
    ...rest,
    audit: auditRest,
    gates: gates.map(({ duration_ms: _d, log_excerpt: _x, ...g }) => withoutCanaryNames(g)),
  };
}

async function eventsOf(store: string, runId: string): Promise<Ev[]> {
  const r = await loopgate(["events", runId, "--store", store, "--json"]);
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Ev);
}

async function onlyRun(store: string): Promise<string> {
  const runs = parseStdout<{ run_id: string }[]>(await loopgate(["runs", "--store", store, "--json"]));
  expect(runs).toHaveLength(1);
  return runs[0]?.run_id ?? "";
}

let reference: { envelope: Record<string, unknown>; events: Ev[] };
beforeAll(async () => {
  const store = tempDir();
  const r = await loopgate(["run", task, "--model", script, "--store", store, "--json"]);
  expect(r.code, show(r)).toBe(0);
  const envelope = parseStdout<Record<string, unknown>>(r);
  reference = { envelope, events: await eventsOf(store, envelope.run_id as string) };
}, 120_000);
afterAll(removeTemps);

describe.concurrent("resume after SIGKILL", () => {
  // Event counts at append boundaries; 11, 14 and 18 leave a mutating call in doubt (tested below). 15 is
  // none: write_file's result and the observation of its change (16) are one append.
  for (const n of [1, 2, 4, 5, 8, 12, 16, 20, 21, 23, 25, 27, 30]) {
    it(`killed after event ${n}: resume ends with the same envelope and log`, async () => {
      const store = tempDir();
      const killed = await loopgate(["run", task, "--model", script, "--store", store, "--json"], {
        env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: String(n) },
      });
      expect(killed.signal, show(killed)).toBe("SIGKILL");
      const runId = await onlyRun(store);
      expect((await eventsOf(store, runId)).filter((e) => !e.type.startsWith("run_lease_")).length).toBe(n);
      const resumed = await loopgate(["resume", runId, "--store", store, "--json"]);
      expect(resumed.code, show(resumed)).toBe(0);
      expect(comparable(parseStdout(resumed))).toEqual(comparable(reference.envelope));
      const events = await eventsOf(store, runId);
      expect(events.filter((e) => e.type === "run_resumed")).toHaveLength(1);
      expect(normalize(events)).toEqual(normalize(reference.events));
    });
  }

  it("a mutating call left in doubt is rolled back and reported to the model, never assumed done", async () => {
    const store = tempDir();
    const killed = await loopgate(["run", task, "--model", script, "--store", store], {
      env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: "14" },
    });
    expect(killed.signal).toBe("SIGKILL");
    const runId = await onlyRun(store);
    const before = await eventsOf(store, runId);
    const last = before.at(-1);
    expect(last?.type).toBe("tool_call_started");
    expect(last?.data.name).toBe("write_file");
    await loopgate(["resume", runId, "--store", store, "--json"]);
    const events = await eventsOf(store, runId);
    const resumedEvent = events.find((e) => e.type === "run_resumed");
    expect(String(resumedEvent?.data.action)).toContain("rolled the workspace back");
    const abandoned = events.find((e) => e.type === "tool_call_abandoned");
    expect(abandoned?.data.call_id).toBe(last?.data.call_id);
    expect(events.some((e) => e.type === "tool_call_finished" && e.data.call_id === last?.data.call_id)).toBe(
      false,
    );
    // The rolled-back file is the pristine one: the interrupted write is not taken as done.
    const pristine = readFileSync(join(exampleDir("js-slugify"), "repo/src/slugify.js"), "utf8");
    expect(readFileSync(join(await runTree(store, runId), "src/slugify.js"), "utf8")).toBe(pristine);
    const status = parseStdout<{ status: string }>(
      await loopgate(["status", runId, "--store", store, "--json"]),
    );
    expect(status.status).not.toBe("SUCCESS");
  });
});

describe("resume of a mission-fixture run", () => {
  it("a --case run killed after its first attempt started resumes to SUCCESS", async () => {
    const dir = tempDir();
    const { writeFileSync, chmodSync } = await import("node:fs");
    const fixture = join(dir, "sum.json");
    writeFileSync(
      fixture,
      JSON.stringify({
        prompt: "Add the numbers in input.json; write the sum to answer.json.",
        goal: "task:sum",
        files: { "input.json": "[2,3]\n" },
        artifacts: { "answer.json": { sum: 5 } },
        preserve: ["input.json"],
      }),
    );
    const solver = join(dir, "solve.sh");
    writeFileSync(solver, `#!/bin/sh\necho '{"sum": 5}' > answer.json\n`);
    chmodSync(solver, 0o755);
    const store = join(dir, "store");
    const killed = await loopgate(["run", "--case", fixture, "--builder", solver, "--store", store], {
      env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: "3" },
    });
    expect(killed.signal, show(killed)).toBe("SIGKILL");
    const runId = await onlyRun(store);
    const resumed = await loopgate(["resume", runId, "--store", store, "--json"]);
    expect(resumed.code, show(resumed)).toBe(0);
    expect(parseStdout<{ status: string }>(resumed).status).toBe("SUCCESS");
  });
});
