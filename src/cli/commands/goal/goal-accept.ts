import { noopBuilder } from "../../../builders/command-builder.js";
import { DomainError } from "../../../core/kernel/errors.js";
import { acceptanceTask } from "../../../runner/goal/acceptance-run.js";
import { openGoal, writeGoal } from "../../../runner/goal/goal-service.js";
import { goalRepo } from "../../../runner/goal/repo/goal-repo.js";
import { receiptOfRun } from "../../../runner/goal/run-receipts.js";
import type { CommandIO } from "../../output/io.js";
import { executeRun } from "../execute-run.js";
import { type GoalFlags, goalStore, guarded, withStore } from "./goal.js";

/**
 * `loopgate goal accept GOAL`: runs every acceptance item's gates fresh on the goal workspace's current
 * revision (no builder: the revision is the work) and records each run's receipt. Exit 0 when every item
 * passed, 1 otherwise.
 */
export async function goalAcceptCommand(io: CommandIO, goalId: string, flags: GoalFlags): Promise<number> {
  // A folder store, or PostgreSQL (the revision's tree from the store's goal repository; the runs and the
  // receipts recorded there; `dir` is this host's folder for run files).
  const where = goalStore(flags);
  const dir = where.dir;
  const storeArg = where.kind === "postgres" ? where.url : dir;
  return guarded(io, flags.json, async () => {
    const { view, facts, tree } = await withStore(where, "read", async (store) => {
      const read = await openGoal(store, dir, goalId);
      return {
        ...read,
        tree: read.facts.health.length ? "" : await goalRepo(store, dir).tree(goalId, read.view.revision),
      };
    });
    if (facts.health.length)
      throw new DomainError(
        `blocked_health: ${facts.health.map((h) => h.detail).join("; ")}; nothing was run`,
      );
    const results: { id: string; run_id: string; status: string }[] = [];
    for (const item of view.acceptance) {
      const onGoal = await withStore(where, false, (store) => acceptanceTask(store, dir, goalId, item, tree));
      const env = await executeRun(
        io,
        onGoal,
        noopBuilder(),
        { ...flags, store: storeArg },
        {
          workFrom: tree,
          goal: { id: goalId, revision: view.revision },
        },
      );
      results.push({ id: item.id, run_id: env.run_id, status: env.status });
      await withStore(where, false, async (store) => {
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
