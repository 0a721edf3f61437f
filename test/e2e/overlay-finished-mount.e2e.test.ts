// An overlay run killed after its verdict is recorded but before its workspace is unmounted leaves the
// overlay mounted; `loopgate resume` on it says the run already finished and releases the mount.
// Needs root and kernel overlayfs (as loopgate's overlay workspaces do); skipped, saying why, elsewhere.
import { cpSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/cli/output/context.js";
import { isOverlayMounted, probeOverlay } from "../../src/workspace/overlay-mount.js";
import { exampleDir, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

const probeDir = tempDir();
const unavailable = process.getuid?.() === 0 ? probeOverlay(probeDir) : "not root";
if (unavailable) console.log(`overlay workspaces unavailable here (${unavailable}): test skipped`);

const OVERLAY = { LOOPGATE_WORKSPACE: "overlay" };

function taskCopy(): { task: string; store: string } {
  const dir = tempDir();
  cpSync(exampleDir("js-slugify"), join(dir, "js-slugify"), { recursive: true });
  return { task: join(dir, "js-slugify", "task.yaml"), store: join(dir, "store") };
}

async function runEvents(store: string, runId: string) {
  const s = await openStore(store, "read");
  try {
    return await s.readStream(`run-${runId}`);
  } finally {
    await s.close();
  }
}

describe.skipIf(unavailable !== null)("an overlay run killed between its verdict and its unmount", () => {
  it("keeps its overlay mounted until `resume` says it finished and releases it", async () => {
    // Where the verdict lands: the uninterrupted run's log, counted the way the fault hook counts appends.
    const ref = taskCopy();
    const whole = await loopgate(["run", ref.task, "--oracle", "--json", "--store", ref.store], {
      env: OVERLAY,
    });
    expect(whole.code, show(whole)).toBe(0);
    const refId = parseStdout<{ run_id: string }>(whole).run_id;
    const refEvents = await runEvents(ref.store, refId);
    const verdictAt = refEvents.findIndex((e) => e.type === "run_finished") + 1;
    expect(verdictAt).toBe(refEvents.length);
    expect(isOverlayMounted(join(ref.store, "runs", refId, "workspace"))).toBe(false);

    // The hook counts a batch's events once the batch is durable, so the verdict's batch may be reached at
    // a count below the verdict's own: the first count (from the verdict down) whose kill leaves the
    // verdict as the log's last event is the kill point wanted.
    let t = taskCopy();
    let runId: string | null = null;
    for (let at = verdictAt; at > verdictAt - 3 && runId === null; at--) {
      t = taskCopy();
      const killed = await loopgate(["run", t.task, "--oracle", "--json", "--store", t.store], {
        env: { ...OVERLAY, LOOPGATE_FAULT_KILL_AFTER_EVENTS: String(at) },
      });
      if (killed.signal !== "SIGKILL") continue;
      const [run] = parseStdout<{ run_id: string }[]>(await loopgate(["runs", "--json", "--store", t.store]));
      if (run && (await runEvents(t.store, run.run_id)).at(-1)?.type === "run_finished") runId = run.run_id;
    }
    if (runId === null) throw new Error(`no kill point at or below ${verdictAt} left the verdict last`);
    const workspace = join(t.store, "runs", runId, "workspace");
    expect(isOverlayMounted(workspace), "the kill left the overlay mounted").toBe(true);

    const resumed = await loopgate(["resume", runId, "--store", t.store]);
    expect(resumed.code, show(resumed)).toBe(0);
    expect(resumed.stderr).toContain("already finished");
    expect(isOverlayMounted(workspace)).toBe(false);
  });
});
