import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder, noopBuilder } from "../../../src/builders/command-builder.js";
import type { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { ConcurrencyError } from "../../../src/core/kernel/errors.js";
import { projectEnvelope } from "../../../src/core/run/envelope.js";
import { runPaths } from "../../../src/runner/run/context/run-context.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { isOverlayMounted } from "../../../src/workspace/overlay-mount.js";
import { overlayOf } from "../../../src/workspace/overlay-workspace.js";
import { removeTree } from "../../../src/workspace/remove-tree.js";
import { runTree } from "../../support/run-tree.js";
import { makeTask } from "../task-fixture.js";

// A tiny shell task: lib/answer.sh must print 42; the held-out check also wants 42 with a marker
// string that must never reach the builder.
const SECRET = "HELDOUT-MARKER-7c1e";
const taskYaml = (extra = "") => `id: answer
prompt: Make lib/answer.sh print 42.
workspace: ./repo
deliverables: ["lib/**"]
protected: ["test/**"]
gates:
  - id: visible
    run: ["sh", "test/check.sh"]
    timeout: 5s
    feedback: log
  - id: hidden
    run: ["sh", "hidden/check.sh"]
    heldout: ./heldout
    timeout: 5s
    feedback: none
budget: { attempts: 2 }
${extra}`;
const repo = {
  "lib/answer.sh": "echo 41\n",
  "test/check.sh":
    'out=$(sh lib/answer.sh); [ "$out" = 42 ] || { echo "visible: expected 42, got $out"; exit 1; }\n',
};
const heldout = {
  "hidden/check.sh": `# ${SECRET}\nout=$(sh lib/answer.sh); [ "$out" = 42 ] || { echo "${SECRET} wrong"; exit 1; }\n`,
};
// Attempt 1 leaves the bug and records what it was told; attempt 2 fixes it.
const learner = `#!/bin/sh
printf '%s' "$1" > "lib/fix-$LOOPGATE_ATTEMPT.txt"
if [ -n "$1" ]; then echo 'echo 42' > lib/answer.sh; fi
echo "done, all tests pass"
`;

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-runner-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  // removeTree unmounts first: the run that lost its lease keeps its overlay mounted, as it must.
  await removeTree(localDir);
});

/** A run's pristine tree: its `pristine/` copy, or its overlay's shared snapshot. */
const pristineOf = (runId: string) => runPaths(join(localDir, "runs", runId)).pristineDir;

describe("runTask", () => {
  it("re-runs every gate on every attempt and feeds back only what feedback allows", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo, heldout, scripts: { "learner.sh": learner } });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(`${t.script("learner.sh")} {required_fix}`),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    expect(env.status).toBe("SUCCESS");
    expect(env.attempts).toBe(2);
    expect(env.gates.map((g) => `${g.attempt}:${g.id}:${g.passed}`)).toEqual([
      "1:visible:false",
      "1:hidden:false",
      "2:visible:true",
      "2:hidden:true",
    ]);
    const ws = await runTree(localDir, env.run_id);
    expect(readFileSync(join(ws, "lib/fix-1.txt"), "utf8")).toBe("");
    const fix = readFileSync(join(ws, "lib/fix-2.txt"), "utf8");
    expect(fix).toContain("check visible: failed (exit 1)");
    expect(fix).toContain("visible: expected 42, got 41");
    expect(fix).toContain("1 further check failed (details withheld)");
    expect(fix).not.toContain(SECRET);
    expect(fix).not.toContain("hidden");
  });

  it("stores every event before returning, and the stored log projects to the same envelope", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo, heldout });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: noopBuilder(),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    const stored = await store.readStream(RunJournal.stream(env.run_id));
    expect(stored.map((e) => e.revision)).toEqual(stored.map((_, i) => i));
    expect(stored.at(-1)?.type).toBe("run_finished");
    expect(projectEnvelope(env.run_id, stored)).toEqual(env);
    expect(env.status).toBe("ESCALATED");
    expect(env.reason).toContain("attempt cap reached (2 of 2)");
  });

  it("ends in TOOL_FAILURE with the reason when the builder command does not exist", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo, heldout });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder("no-such-agent-31337 {prompt}"),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("no-such-agent-31337");
    expect(env.gates).toEqual([]);
  });

  it("ends in TOOL_FAILURE when a gate's program is not installed", async () => {
    const t = await makeTask({
      taskYaml: taskYaml().replace('["sh", "test/check.sh"]', '["no-such-checker-31337"]'),
      repo,
      heldout,
    });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: noopBuilder(),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("no-such-checker-31337");
    // Found before the builder runs: no gate ran, no attempt was spent.
    expect(env.gates).toEqual([]);
    expect(env.attempts).toBe(0);
  });

  it("ends in TOOL_FAILURE when the task workspace disappears before the run", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo, heldout });
    const loaded = loadTask(t.file);
    await rm(join(t.dir, "repo"), { recursive: true });
    const env = await runTask({ loaded, builder: noopBuilder(), store, localDir, sandbox: "bubblewrap" });
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toMatch(/workspace .* is missing/);
  });

  it("keeps the builder away from the task folder, the held-out files and the pristine copy", async () => {
    const snoop = `#!/bin/sh
for p in "${"$"}{TASK_DIR}/heldout/hidden/check.sh" ../pristine/test/check.sh ../../../events.db; do
  if cat "$p" >/dev/null 2>&1; then echo "READ $p"; fi
done
echo 'echo tampered' > ../pristine/test/check.sh 2>/dev/null && echo WROTE-PRISTINE
ls .. 2>&1 | head -3
`;
    const t = await makeTask({
      taskYaml: taskYaml(),
      repo,
      heldout,
      scripts: { "snoop.sh": snoop.replace("${TASK_DIR}", "TASKDIR") },
    });
    const { writeFile } = await import("node:fs/promises");
    await writeFile(t.script("snoop.sh"), snoop.replace("${TASK_DIR}", t.dir));
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(t.script("snoop.sh")),
      store,
      localDir,
      sandbox: "bubblewrap",
      maxAttempts: 1,
    });
    const said = env.claims.map((c) => c.text).join("\n");
    expect(said).not.toContain("READ");
    expect(said).not.toContain("WROTE-PRISTINE");
    const pristine = readFileSync(join(pristineOf(env.run_id), "test/check.sh"), "utf8");
    expect(pristine).toBe(repo["test/check.sh"]);
  });

  it("a gate cannot write through the linked gate environment into the pristine copy", async () => {
    // The builder's deliverable, run by the visible gate, tries to rewrite the protected check for the next attempt.
    const tamper = `#!/bin/sh
mkdir -p lib
cat > lib/answer.sh <<'EOF2'
echo 'exit 0' > test/check.sh 2>/dev/null
echo 'exit 0' > hidden/check.sh 2>/dev/null
echo 41
EOF2
`;
    const t = await makeTask({ taskYaml: taskYaml(), repo, heldout, scripts: { "tamper.sh": tamper } });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(t.script("tamper.sh")),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    expect(env.status).toBe("ESCALATED");
    expect(env.gates.filter((g) => g.attempt === 2).every((g) => !g.passed)).toBe(true);
    expect(readFileSync(join(pristineOf(env.run_id), "test/check.sh"), "utf8")).toBe(repo["test/check.sh"]);
    expect(readFileSync(join(t.dir, "heldout/hidden/check.sh"), "utf8")).toBe(heldout["hidden/check.sh"]);
  });

  it("verify gates a finished folder in one attempt", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo, heldout });
    const good = await makeTask({ taskYaml: taskYaml(), repo: { ...repo, "lib/answer.sh": "echo 42\n" } });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: noopBuilder(),
      store,
      localDir,
      sandbox: "bubblewrap",
      workFrom: join(good.dir, "repo"),
    });
    expect(env.status).toBe("SUCCESS");
    expect(env.attempts).toBe(1);
  });

  it("--unsafe-no-sandbox still gates (with real copies) and says so in the envelope", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo, heldout, scripts: { "learner.sh": learner } });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(`${t.script("learner.sh")} {required_fix}`),
      store,
      localDir,
      sandbox: "none",
    });
    expect(env.sandbox).toBe("none");
    expect(env.status).toBe("SUCCESS");
    expect(existsSync(join(localDir, "runs", env.run_id, "gate-env"))).toBe(true);
  });
  it("a hedged completion claim sets hedge_warning without deciding anything", async () => {
    const hedger =
      "#!/bin/sh\necho 'echo 42' > lib/answer.sh\necho 'Fixed it, I believe it should work now.'\n";
    const t = await makeTask({ taskYaml: taskYaml(), repo, heldout, scripts: { "hedger.sh": hedger } });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(t.script("hedger.sh")),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    expect(env.audit.hedge_warning).toBe(true);
    expect(env.status).toBe("SUCCESS");
    const plain = await makeTask({
      taskYaml: taskYaml(),
      repo,
      heldout,
      scripts: { "plain.sh": hedger.replace("I believe it should work now", "node --test exits 0") },
    });
    const env2 = await runTask({
      loaded: loadTask(plain.file),
      builder: commandBuilder(plain.script("plain.sh")),
      store,
      localDir,
      sandbox: "bubblewrap",
    });
    expect(env2.audit.hedge_warning).toBe(false);
  });

  it("a lost lease stops the run at once: its builder is killed and this process appends nothing more", async () => {
    // The builder would write lib/finished.txt after 20 s; another owner takes the run's lease while it sleeps.
    const sleeper = "#!/bin/sh\nsleep 20\necho done > lib/finished.txt\n";
    const t = await makeTask({ taskYaml: taskYaml(), repo, heldout, scripts: { "sleeper.sh": sleeper } });
    const runId = `lease-lost-${randomUUID().slice(0, 8)}`;
    const stream = RunJournal.stream(runId);
    const running = runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(t.script("sleeper.sh")),
      store,
      localDir,
      sandbox: "bubblewrap",
      runId,
      leaseTtlMs: 600,
    });
    const outcome = running.then(
      () => null,
      (e: unknown) => e,
    );
    // Once the builder runs, another process's lease lands at the stream's next revision.
    let taken: LoopgateEvent | null = null;
    while (!taken) {
      const events = await store.readStream(stream);
      if (!events.some((e) => e.type === "attempt_started")) {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      const event = {
        id: randomUUID(),
        type: "run_lease_taken",
        data: {
          owner: { pid: 1, host: "elsewhere", token: "b".repeat(32) },
          expires_at: new Date(Date.now() + 600_000).toISOString(),
          previous: null,
        },
        meta: { at: new Date().toISOString(), origin: "runtime" },
      } as LoopgateEvent;
      try {
        await store.append(stream, [event], events.at(-1)?.revision ?? -1);
        taken = event;
      } catch (e) {
        if (!(e instanceof ConcurrencyError)) throw e; // a renewal got there first: try again
      }
    }
    const error = await outcome;
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toMatch(/lease|revision|concurren/i);
    // Nothing after the other owner's event, and the builder never reached its end.
    expect((await store.readStream(stream)).at(-1)?.id).toBe(taken.id);
    expect(existsSync(join(localDir, "runs", runId, "workspace", "lib", "finished.txt"))).toBe(false);
    // Its overlay stays mounted: the new owner may be on this machine, working in it.
    const overlay = overlayOf(join(localDir, "runs", runId));
    if (overlay) expect(isOverlayMounted(overlay.merged)).toBe(true);
  });
});
