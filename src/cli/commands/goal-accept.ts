import { noopBuilder } from "../../builders/command-builder.js";
import { DomainError } from "../../core/errors.js";
import { acceptanceTask } from "../../runner/goal/acceptance-run.js";
import { receiptOfRun } from "../../runner/goal/evidence.js";
import { openGoal, writeGoal } from "../../runner/goal/goal-service.js";
import { revisionTree } from "../../runner/goal/goal-workspace.js";
import type { CommandIO } from "../io.js";
import { type GoalFlags, goalFolderStore, guarded, withStore } from "./goal.js";
import { executeRun } from "./run-common.js";

/**
 * `loopgate goal accept GOAL`: runs every acceptance item's gates fresh on the goal workspace's current
 * revision (no builder: the revision is the work) and records each run's receipt. Exit 0 when every item
 * passed, 1 otherwise.
 */
export async function goalAcceptCommand(io: CommandIO, goalId: string, flags: GoalFlags): Promise<number> {
  const dir = goalFolderStore(flags, "goal accept");
  return guarded(io, flags.json, async () => {
    const { view, facts } = await withStore(dir, "read", (store) => openGoal(store, dir, goalId));
    if (facts.health.length)
      throw new DomainError(
        `blocked_health: ${facts.health.map((h) => h.detail).join("; ")}; nothing was run`,
      );
    const tree = await revisionTree(dir, goalId, view.revision);
    const results: { id: string; run_id: string; status: string }[] = [];
    for (const item of view.acceptance) {
      const onGoal = acceptanceTask(item, tree);
      const env = await executeRun(
        io,
        onGoal,
        noopBuilder(),
        { ...flags, store: dir },
        {
          workFrom: tree,
          goal: { id: goalId, revision: view.revision },
        },
      );
      results.push({ id: item.id, run_id: env.run_id, status: env.status });
      await withStore(dir, false, async (store) => {
        const { receipt } = await receiptOfRun(store, dir, env.run_id);
        await writeGoal(
          store,
          dir,
          goalId,
          { kind: "acceptance", acceptanceId: item.id, receipt },
          undefined,
        );
      });
      if (!flags.json)
        io.out(`${env.status === "SUCCESS" ? "✓" : "✗"} ${item.id}: ${env.status} (run ${env.run_id})\n`);
    }
    const ok = results.every((r) => r.status === "SUCCESS");
    if (flags.json)
      io.out(`${JSON.stringify({ goal: goalId, revision: view.revision, accepted: ok, items: results })}\n`);
    else
      io.out(
        ok ? `acceptance holds on revision ${view.revision.slice(0, 12)}\n` : "acceptance does not hold\n",
      );
    return ok ? 0 : 1;
  });
}
