import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { noopBuilder } from "../../../../src/builders/command-builder.js";
import { runTask } from "../../../../src/runner/run/run-task.js";
import { loadTask } from "../../../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../../../src/store/sqlite/sqlite-event-store.js";
import { ObservationStore } from "../../../../src/workspace/observation-store.js";
import { probeOverlay } from "../../../../src/workspace/overlay-mount.js";
import { WORKSPACE_MODE_VARIABLE } from "../../../../src/workspace/overlay-workspace.js";
import { makeTask } from "../../task-fixture.js";

afterEach(() => vi.restoreAllMocks());

const overlayUnavailable = process.getuid?.() === 0 ? probeOverlay(tmpdir()) : "not root";
const modes = ["copy", ...(overlayUnavailable ? [] : ["overlay"])] as const;
if (overlayUnavailable) console.log(`overlay workspaces unavailable (${overlayUnavailable}): copy mode only`);

describe.each(modes)("an attempt's observations (%s workspace)", (mode) => {
  it("are read once per attempt, not once per gate, and pristine once per run", async () => {
    const saved = process.env[WORKSPACE_MODE_VARIABLE];
    process.env[WORKSPACE_MODE_VARIABLE] = mode;
    const { dir, file } = await makeTask({
      taskYaml: `id: many-gates
prompt: Nothing to do.
workspace: ./repo
gates:
  - { id: g1, static: { path: a.txt, not_match: "x" } }
  - { id: g2, static: { path: a.txt, not_match: "y" } }
  - { id: g3, static: { path: a.txt, not_match: "z" } }
  - { id: g4, static: { path: a.txt, not_match: "w" } }
budget: { attempts: 1 }
`,
      repo: { "a.txt": "hello\n" },
    });
    const localDir = await mkdtemp(join(tmpdir(), "loopgate-inputs-"));
    const store = SqliteEventStore.open(join(localDir, "events.db"));
    const reads: string[] = [];
    const get = ObservationStore.prototype.get;
    vi.spyOn(ObservationStore.prototype, "get").mockImplementation(function (
      this: ObservationStore,
      id: string,
    ) {
      reads.push(id);
      return get.call(this, id);
    });
    try {
      const env = await runTask({
        loaded: loadTask(file),
        builder: noopBuilder(),
        store,
        localDir,
        sandbox: "none",
      });
      expect(env.status).toBe("SUCCESS");
      expect(env.gates.map((g) => g.id)).toEqual(["g1", "g2", "g3", "g4"]);
      // Pristine is read once for the whole run (the overlay's observer, the observation phase and the
      // gates share it); the after-builder observation once for the four gates (before: two reads per
      // gate; then three per attempt on a copy, four on an overlay).
      expect(reads).toHaveLength(2);
    } finally {
      if (saved === undefined) delete process.env[WORKSPACE_MODE_VARIABLE];
      else process.env[WORKSPACE_MODE_VARIABLE] = saved;
      await store.close();
      await rm(localDir, { recursive: true, force: true });
      await rm(dir, { recursive: true, force: true });
    }
  });
});
