// A goal writes back exactly the change its run's gates saw. Each gate records the digest of the
// gate-change plan its environment was built from (gate_run_finished.change_plan_digest); the writeback
// recomputes the plan and refuses, writing nothing, when the digests differ: a crafted gate record, or a
// task whose deliverables changed after the run. A run recorded before the digest existed writes back
// as before. A real run (no sandbox), a real SQLite log and a real git goal workspace.
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../../src/builders/command-builder.js";
import type { LoopgateEvent, RecordedEvent } from "../../../src/core/events/loopgate-event.js";
import { changePlanDigest } from "../../../src/core/observation/gate-change-digest.js";
import { acceptedChange } from "../../../src/runner/goal/repo/deliverables.js";
import { createGoalWorkspace } from "../../../src/runner/goal/repo/goal-workspace.js";
import { writeBack } from "../../../src/runner/goal/repo/writeback.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import { type LoadedTask, loadTask } from "../../../src/runner/task-source/load-task.js";
import type { EventStore } from "../../../src/store/kernel/event-store.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../task-fixture.js";

const temps: string[] = [];
const stores: EventStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
  for (const t of temps) await rm(t, { recursive: true, force: true });
});

const git = (ws: string, ...args: string[]) =>
  execFileSync("git", args, { cwd: ws, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

interface Ran {
  store: EventStore;
  localDir: string;
  loaded: LoadedTask;
  runId: string;
  repo: string;
}

/** A finished SUCCESS run whose builder changed a.txt (a deliverable) and notes.md (not one). */
async function finishedRun(): Promise<Ran> {
  const t = await makeTask({
    taskYaml: `id: wb-plan
prompt: Shout.
workspace: ./repo
deliverables: ["a.txt"]
gates:
  - { id: shouted, static: { path: a.txt, match: "^ALPHA$" } }
  - { id: kept, static: { path: b.txt, exists: true } }
budget: { attempts: 1 }
`,
    repo: { "a.txt": "alpha\n", "b.txt": "beta\n", "notes.md": "n\n" },
    scripts: { "fix.sh": "#!/bin/sh\nprintf 'ALPHA\\n' > a.txt\nprintf 'scribbled\\n' > notes.md\n" },
  });
  temps.push(t.dir);
  const localDir = await mkdtemp(join(tmpdir(), "lg-wb-plan-"));
  temps.push(localDir);
  const store = SqliteEventStore.open(join(localDir, "events.db"));
  stores.push(store);
  const loaded = loadTask(t.file);
  const env = await runTask({
    loaded,
    builder: commandBuilder(`'${t.script("fix.sh")}'`),
    store,
    localDir,
    sandbox: "none",
  });
  expect(env.status, env.reason).toBe("SUCCESS");
  return { store, localDir, loaded, runId: env.run_id, repo: join(t.dir, "repo") };
}

/** A goal workspace made from the task's starting files, and its first revision. */
async function goalWorkspace(repo: string): Promise<{ ws: string; base: string }> {
  const ws = join(await mkdtemp(join(tmpdir(), "lg-wb-plan-goal-")), "workspace");
  temps.push(join(ws, ".."));
  return { ws, base: await createGoalWorkspace(repo, ws, "g1") };
}

const gateRecords = (events: RecordedEvent[]) =>
  events.flatMap((e) => (e.type === "gate_run_finished" ? [e] : []));

describe("a goal's writeback and the change plan its run's gates saw", () => {
  it("each gate records the digest of the plan it ran on; the writeback recomputes the same and writes it", async () => {
    const r = await finishedRun();
    const change = await acceptedChange(r.store, r.runId, r.loaded, r.localDir);
    expect(change.refusal).toBeUndefined();
    expect(change.carry.map((e) => e.path)).toEqual(["a.txt"]);
    const gates = gateRecords(await r.store.readStream(RunJournal.stream(r.runId)));
    expect(gates.map((g) => g.data.gate_id)).toEqual(["shouted", "kept"]);
    for (const g of gates) expect(g.data.change_plan_digest).toBe(changePlanDigest(change));
    const { ws, base } = await goalWorkspace(r.repo);
    const out = await writeBack({ workspace: ws, base, change, turnKey: "g1/a/t1", subject: "turn" });
    expect(out.kind).toBe("accepted");
    expect(git(ws, "show", "HEAD:a.txt")).toBe("ALPHA");
    expect(git(ws, "show", "HEAD:notes.md")).toBe("n");
  });

  it("a gate record that names another plan (a crafted append) refuses the writeback: nothing is committed", async () => {
    const r = await finishedRun();
    const stream = RunJournal.stream(r.runId);
    const last = gateRecords(await r.store.readStream(stream)).at(-1);
    if (last?.type !== "gate_run_finished") throw new Error("the run recorded no gate");
    const forged = {
      id: randomUUID(),
      type: "gate_run_finished",
      data: { ...last.data, change_plan_digest: "0".repeat(64) },
      meta: last.meta,
    } as LoopgateEvent;
    await r.store.append(stream, [forged], "any");
    const change = await acceptedChange(r.store, r.runId, r.loaded, r.localDir);
    expect(change.refusal).toMatch(/^change plan mismatch: gate kept ran on the change plan 0{64}, /);
    expect(change.refusal).toContain(changePlanDigest(change));
    const { ws, base } = await goalWorkspace(r.repo);
    const out = await writeBack({ workspace: ws, base, change, turnKey: "g1/a/t1", subject: "turn" });
    expect(out).toEqual({ kind: "rejected", reason: change.refusal });
    expect(git(ws, "rev-parse", "HEAD")).toBe(base);
    expect(git(ws, "show", "HEAD:a.txt")).toBe("alpha");
  });

  it("a task whose deliverables changed since the run recomputes another plan: refused", async () => {
    const r = await finishedRun();
    const widened = { ...r.loaded, task: { ...r.loaded.task, deliverables: [] } };
    const change = await acceptedChange(r.store, r.runId, widened, r.localDir);
    // Everything not protected is now a deliverable: notes.md would be written, though no gate saw it.
    expect(change.carry.map((e) => e.path)).toEqual(["a.txt", "notes.md"]);
    expect(change.refusal).toMatch(/^change plan mismatch: gate shouted /);
    const { ws, base } = await goalWorkspace(r.repo);
    const out = await writeBack({ workspace: ws, base, change, turnKey: "g1/a/t1", subject: "turn" });
    expect(out.kind).toBe("rejected");
    expect(git(ws, "rev-parse", "HEAD")).toBe(base);
  });

  it("a run recorded before the digest existed writes back as it always did", async () => {
    const r = await finishedRun();
    // The log as an older loopgate wrote it: the gate records carry no digest.
    const old: EventStore = new Proxy(r.store, {
      get(target, p, receiver) {
        const v = Reflect.get(target, p, receiver);
        if (p !== "readStream") return typeof v === "function" ? v.bind(target) : v;
        return async (...args: Parameters<EventStore["readStream"]>) =>
          (await target.readStream(...args)).map((e) => {
            if (e.type !== "gate_run_finished") return e;
            const { change_plan_digest: _, ...data } = e.data;
            return { ...e, data };
          });
      },
    });
    expect(
      gateRecords(await old.readStream(RunJournal.stream(r.runId))).every(
        (g) => g.data.change_plan_digest === undefined,
      ),
    ).toBe(true);
    // The task changed too: without a recorded digest nothing can tell, so the old behaviour holds.
    const widened = { ...r.loaded, task: { ...r.loaded.task, deliverables: [] } };
    const change = await acceptedChange(old, r.runId, widened, r.localDir);
    expect(change.refusal).toBeUndefined();
    const { ws, base } = await goalWorkspace(r.repo);
    const out = await writeBack({ workspace: ws, base, change, turnKey: "g1/a/t1", subject: "turn" });
    expect(out.kind).toBe("accepted");
    expect(git(ws, "show", "HEAD:notes.md")).toBe("scribbled");
  });
});
