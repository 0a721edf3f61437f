import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../../src/builders/command-builder.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { probeOverlay } from "../../../src/workspace/overlay-mount.js";
import { WORKSPACE_MODE_VARIABLE } from "../../../src/workspace/overlay-workspace.js";
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

  it.skipIf(probeOverlay(tmpdir()) !== null)("same verdict, changes and findings", async () => {
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
