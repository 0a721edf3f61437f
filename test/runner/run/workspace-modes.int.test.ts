import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../../src/builders/command-builder.js";
import type { RunReporter } from "../../../src/runner/run/context/reporter.js";
import { GATE_OVERLAY_MIN_ENTRIES } from "../../../src/runner/run/phases/gate-run.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { exportRunTree } from "../../../src/runner/run/run-tree.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { WorkspaceObserver } from "../../../src/workspace/observer.js";
import { isOverlayMounted, mountOverlay, probeOverlay } from "../../../src/workspace/overlay-mount.js";
import {
  chooseWorkspaceMode,
  overlayOf,
  WORKSPACE_MODE_VARIABLE,
} from "../../../src/workspace/overlay-workspace.js";
import { removeTree } from "../../../src/workspace/remove-tree.js";
import { makeTask } from "../task-fixture.js";

// One task, one builder that forges, hides and breaks what it can; run with each workspace mode forced,
// the verdict and every recorded change and finding must be the same.
const taskYaml = `id: modes
prompt: Make lib/answer.sh print 42.
workspace: ./repo
deliverables: ["lib/**"]
protected: ["test/**"]
gates:
  - id: visible
    run: ["sh", "test/check.sh"]
    timeout: 10s
budget: { attempts: 2 }
`;
const repo = {
  "lib/answer.sh": "echo 41\n",
  "lib/old/gone.sh": "echo gone\n",
  "test/check.sh": 'out=$(sh lib/answer.sh); [ "$out" = 42 ] || { echo "expected 42, got $out"; exit 1; }\n',
  "docs/readme.txt": "read me\n",
};
// Attempt 1 forges the protected check, hides a file and deletes a folder; attempt 2 does the work.
const builder = `#!/bin/sh
if [ "$LOOPGATE_ATTEMPT" = 1 ]; then
  echo 'exit 0' > test/check.sh
  echo hidden > lib/.hidden
  rm -r lib/old
  ln -s ../docs lib/docs-link
  mkfifo lib/pipe
  chmod 700 docs/readme.txt
else
  rm -f lib/pipe
  echo 'echo 42' > lib/answer.sh
fi
`;

const modes = ["copy", "overlay"] as const;

// Overlays need root and kernel overlayfs. Where a trial overlay cannot be mounted (an unprivileged
// developer's machine) runs copy, and these tests of the overlay path cannot run; CI runs as root.
const noOverlay = probeOverlay(tmpdir());
if (noOverlay) console.log(`workspace modes: overlay tests skipped, ${noOverlay}`);

describe("a run is judged the same on a copy and on an overlay", () => {
  let localDir: string;
  let store: SqliteEventStore;
  const saved = process.env[WORKSPACE_MODE_VARIABLE];
  beforeAll(async () => {
    localDir = await mkdtemp(join(tmpdir(), "loopgate-modes-"));
    store = SqliteEventStore.open(join(localDir, "events.db"));
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env[WORKSPACE_MODE_VARIABLE];
    else process.env[WORKSPACE_MODE_VARIABLE] = saved;
    await store.close();
    await rm(localDir, { recursive: true, force: true });
  });

  it.skipIf(noOverlay !== null)("same verdict, changes and findings", async () => {
    const t = await makeTask({ taskYaml, repo, scripts: { "b.sh": builder } });
    const facts = [];
    for (const mode of modes) {
      process.env[WORKSPACE_MODE_VARIABLE] = mode;
      const runId = `20260101-000000-${mode === "copy" ? "c0c0c0" : "0f0f0f"}`;
      const env = await runTask({
        loaded: loadTask(t.file),
        builder: commandBuilder(t.script("b.sh")),
        store,
        localDir,
        sandbox: "bubblewrap",
        runId,
      });
      const runDir = join(localDir, "runs", runId);
      expect(existsSync(join(runDir, "overlay.json"))).toBe(mode === "overlay");
      // A finished overlay run holds no mount and no copy: its changes are in upper/.
      if (mode === "overlay") expect(readdirSync(join(runDir, "workspace"))).toEqual([]);
      const events = await store.readStream(RunJournal.stream(runId));
      // `loopgate export` writes the final tree from either layout: observed again, it is the recorded one.
      const last = events.findLast((e) => e.type === "workspace_observed");
      const tree = join(localDir, `tree-${mode}`);
      await exportRunTree({ runId, events, localDir, shared: null, dest: tree });
      expect((await new WorkspaceObserver(tree).observe()).id).toBe(
        last?.type === "workspace_observed" ? last.data.observation_id : "",
      );
      facts.push({
        status: env.status,
        attempts: env.attempts,
        gates: env.gates.map((g) => [g.attempt, g.id, g.passed]),
        findings: env.findings.map((f) => [f.attempt, f.code, f.path ?? ""]),
        observations: events.flatMap((e) =>
          e.type === "workspace_observed" ? [[e.data.phase, e.data.attempt, e.data.observation_id]] : [],
        ),
        changes: events.flatMap((e) => (e.type === "workspace_changed" ? [e.data] : [])),
      });
    }
    const [copy, overlay] = facts;
    // The forged check never counts (its change is a blocking finding), and the FIFO is reported.
    expect(copy?.status).toBe("ESCALATED");
    expect(copy?.findings).toContainEqual([1, "protected_path_modified", "test/check.sh"]);
    expect(copy?.findings).toContainEqual([1, "unsupported_entry", "lib/pipe"]);
    expect(overlay).toEqual(copy);
  });
});

describe("the workspace mode is chosen where it is not forced", () => {
  let root: string;
  const saved = process.env[WORKSPACE_MODE_VARIABLE];
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "loopgate-choice-"));
    delete process.env[WORKSPACE_MODE_VARIABLE];
  });
  afterAll(async () => {
    if (saved !== undefined) process.env[WORKSPACE_MODE_VARIABLE] = saved;
    await removeTree(root);
  });

  const honest = "#!/bin/sh\necho 'echo 42' > lib/answer.sh\n";
  async function runIn(
    localDir: string,
    reporter: RunReporter = {},
    task: Parameters<typeof makeTask>[0] = { taskYaml, repo, scripts: { "b.sh": honest } },
  ) {
    const t = await makeTask(task);
    const store = SqliteEventStore.open(join(localDir, "events.db"));
    try {
      const env = await runTask({
        loaded: loadTask(t.file),
        builder: commandBuilder(t.script("b.sh")),
        store,
        localDir,
        sandbox: "bubblewrap",
        reporter,
      });
      return { env, runDir: join(localDir, "runs", env.run_id) };
    } finally {
      await store.close();
    }
  }

  it.skipIf(noOverlay !== null)("where overlays can be mounted, a run uses one, silently", async () => {
    const notes: string[] = [];
    const { env, runDir } = await runIn(join(root, "plain"), { note: (s) => notes.push(s) });
    expect(env.status, env.reason).toBe("SUCCESS");
    expect(overlayOf(runDir)).not.toBeNull();
    expect(isOverlayMounted(join(runDir, "workspace"))).toBe(false);
    expect(notes.filter((n) => n.startsWith("workspace:"))).toEqual([]);
  });

  it.skipIf(noOverlay !== null)(
    "where the overlay cannot be mounted after all, the run copies and says why, once per store; forced, it fails",
    async () => {
      // A store on an overlay: overlayfs refuses another overlay's upper layer there.
      const d = {
        lower: join(root, "l"),
        upper: join(root, "u"),
        work: join(root, "w"),
        merged: join(root, "m"),
      };
      for (const p of Object.values(d)) mkdirSync(p);
      mountOverlay(d);
      const notes: string[] = [];
      const { env, runDir } = await runIn(join(d.merged, "store"), { note: (s) => notes.push(s) });
      expect(env.status, env.reason).toBe("SUCCESS");
      expect(overlayOf(runDir)).toBeNull();
      expect(readFileSync(join(runDir, "workspace", "lib/answer.sh"), "utf8")).toBe("echo 42\n");
      expect(notes.filter((n) => n.startsWith("workspace:"))).toEqual([
        expect.stringMatching(/^workspace: copy \(an overlay could not be made: cannot mount an overlay at /),
      ]);
      // The store noted it: the next run copies at once, makes no snapshot and says nothing.
      const snapshots = readdirSync(join(d.merged, "store", "snapshots")).length;
      const again = await runIn(join(d.merged, "store"), { note: (s) => notes.push(s) });
      expect(again.env.status, again.env.reason).toBe("SUCCESS");
      expect(overlayOf(again.runDir)).toBeNull();
      expect(notes.filter((n) => n.startsWith("workspace:"))).toHaveLength(1);
      expect(readdirSync(join(d.merged, "store", "snapshots"))).toHaveLength(snapshots);
      process.env[WORKSPACE_MODE_VARIABLE] = "overlay";
      try {
        const forced = await runIn(join(d.merged, "forced"));
        expect(forced.env.status).toBe("TOOL_FAILURE");
        expect(forced.env.reason).toContain(`${WORKSPACE_MODE_VARIABLE}=overlay, but`);
      } finally {
        delete process.env[WORKSPACE_MODE_VARIABLE];
      }
    },
  );

  it.skipIf(noOverlay !== null)(
    "a refusal noted on another filesystem is not this one's; doctor, which mounts a trial overlay, says how to try again",
    async () => {
      const runs = join(root, "noted", "runs");
      mkdirSync(runs, { recursive: true });
      const note = join(runs, ".overlay-refused");
      writeFileSync(note, JSON.stringify({ dev: statSync(runs).dev + 1, why: "elsewhere" }));
      expect(chooseWorkspaceMode(runs, {}).mode).toBe("overlay");
      writeFileSync(note, JSON.stringify({ dev: statSync(runs).dev, why: "mount said no" }));
      expect(chooseWorkspaceMode(runs, {})).toEqual({
        mode: "copy",
        why: expect.stringContaining("an overlay could not be mounted here before (mount said no;"),
      });
      expect(chooseWorkspaceMode(runs, {}, true).why).toContain(
        `remove ${note} to let runs use overlays again`,
      );
    },
  );

  it.skipIf(noOverlay !== null)(
    "a run stopped by an error of its own leaves no mount behind (one that lost its lease keeps it: run-task.int)",
    async () => {
      const boom = new Error("the reporter broke");
      const localDir = join(root, "boom");
      await expect(
        runIn(localDir, {
          gateStarted: () => {
            throw boom;
          },
        }),
      ).rejects.toBe(boom);
      const [runId] = readdirSync(join(localDir, "runs"));
      const runDir = join(localDir, "runs", runId ?? "");
      expect(overlayOf(runDir)).not.toBeNull();
      expect(isOverlayMounted(join(runDir, "workspace"))).toBe(false);
    },
  );

  it.skipIf(noOverlay !== null)(
    "an overlay run's gates work on an overlay of their own once the tree is large enough for it to pay",
    async () => {
      // The gate says which filesystem its environment is, and checks the carried change and a held-out file.
      const gateYaml = `id: layered
prompt: Make lib/answer.sh print 42.
workspace: ./repo
deliverables: ["lib/**"]
gates:
  - id: fs
    run: ["sh", "-c", "stat -f -c 'env-fs=%T' .; test \\"$(sh lib/answer.sh)\\" = 42 && test -f hidden/t.sh"]
    heldout: ./heldout
    timeout: 10s
budget: { attempts: 1 }
`;
      const seen: Record<string, string> = {};
      for (const [size, files] of [
        ["small", 10],
        ["large", GATE_OVERLAY_MIN_ENTRIES],
      ] as const) {
        const extra = Object.fromEntries(
          Array.from({ length: files }, (_, i) => [`data/d${i % 20}/f${i}.txt`, `${i}\n`]),
        );
        const { env, runDir } = await runIn(
          join(root, `gates-${size}`),
          {},
          {
            taskYaml: gateYaml,
            repo: { "lib/answer.sh": "echo 41\n", ...extra },
            heldout: { "hidden/t.sh": "true\n" },
            scripts: { "b.sh": honest },
          },
        );
        expect(env.status, env.gates.map((g) => g.log_excerpt).join("\n")).toBe("SUCCESS");
        seen[size] = /env-fs=(\S+)/.exec(env.gates[0]?.log_excerpt ?? "")?.[1] ?? "";
        // The environment and its layers are gone with the gate.
        expect(readdirSync(join(runDir, "gate-env"))).toEqual([]);
      }
      expect(seen.large).toBe("overlayfs");
      expect(seen.small).not.toBe("overlayfs");
      expect(seen.small).not.toBe("");
    },
  );
});
