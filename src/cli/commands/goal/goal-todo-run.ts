import { runRefusal } from "../../../core/goal/run-admission.js";
import { DomainError } from "../../../core/kernel/errors.js";
import { goalState } from "../../../runner/goal/goal-engine.js";
import { openGoal } from "../../../runner/goal/goal-service.js";
import { GoalTaskError, goalTaskFile } from "../../../runner/goal/goal-tasks.js";
import { goalRepo } from "../../../runner/goal/repo/goal-repo.js";
import { unwrittenPaths } from "../../../runner/goal/todo-evidence.js";
import type { RunFlags } from "../../../runner/host/run-flags.js";
import { exitCodeOf } from "../../output/exit-codes.js";
import { formatEnvelope } from "../../output/format.js";
import { hintCommand, hintsFor, storeLine } from "../../output/hints.js";
import type { CommandIO } from "../../output/io.js";
import { chosen } from "../choose-builder.js";
import { executeRun } from "../execute-run.js";
import { goalStore, guarded, withStore } from "./goal.js";

/**
 * `loopgate todo run GOAL TODO`: runs an open advancement todo's task on the goal workspace's current
 * revision (a plain copy of that commit), with the goal's builder unless one is given, and records the goal
 * and revision in the run so `todo done --evidence` can check them. It writes nothing back: a run whose
 * change the workspace lacks is not evidence (rule durable_writeback_before_done); `goal tick` is the one
 * path that commits a change, with the todo's completion in the same append. Refused before any builder
 * starts where the goal's rules refuse the work (core/goal/run-admission.ts).
 */
export async function todoRunCommand(
  io: CommandIO,
  goalId: string,
  todoId: string,
  flags: RunFlags,
): Promise<number> {
  // A folder store, or PostgreSQL (the revision's tree then comes from the store's goal repository,
  // and the run is recorded there too; `dir` is this host's folder for run files).
  const where = goalStore(flags);
  const dir = where.dir;
  const storeArg = where.kind === "postgres" ? where.url : dir;
  return guarded(io, flags.json, async () => {
    const { view, tree, todo } = await withStore(where, "read", async (store) => {
      const read = await openGoal(store, dir, goalId);
      // Gates guard the effect: the todo's own state, blocked_health, a decision scope no gate has
      // approved, throttled and paused refuse the run here, before any builder starts.
      const refusal = runRefusal(goalState(read.log.events), todoId, {
        now: read.facts.now,
        health: read.facts.health,
      });
      if (refusal)
        throw new DomainError(
          `${refusal.message}${refusal.next ? ` (${hintCommand(hintsFor(where), refusal.next)})` : ""}`,
        );
      const todo = read.view.todos.find((t) => t.id === todoId);
      if (!todo?.task) throw new DomainError(`goal ${goalId} has no task for ${todoId}`);
      return {
        ...read,
        todo: { ...todo, task: todo.task },
        tree: await goalRepo(store, dir).tree(goalId, read.view.revision),
      };
    });
    const task = todo.task;
    const loaded = await withStore(where, false, async (store) => {
      try {
        return await goalTaskFile(store, dir, goalId, task.path, task.digest);
      } catch (e) {
        if (e instanceof GoalTaskError && e.why === "changed")
          throw new DomainError(
            `${e.message}; its runs would not prove this todo (supersede it with the new task)`,
          );
        throw e;
      }
    });
    const onGoal = { ...loaded, workspace: tree };
    const runFlags: RunFlags = { ...flags, store: storeArg };
    const builder = await chosen(onGoal, runFlags, view.agent, view.sourcePath);
    const env = await executeRun(io, onGoal, builder, runFlags, {
      goal: { id: goalId, revision: view.revision },
    });
    if (flags.json) io.out(`${JSON.stringify(env, null, 2)}\n`);
    else {
      const hints = hintsFor(where);
      io.out(`${formatEnvelope(env, hints)}\n`);
      // Done means persisted: a SUCCESS whose change the workspace lacks is not evidence on its own.
      const unwritten =
        env.status === "SUCCESS"
          ? await withStore(where, false, (store) => unwrittenPaths(store, dir, goalId, env.run_id, task))
          : [];
      io.out(
        env.status !== "SUCCESS"
          ? `not evidence (${env.status}); audit trail: ${hintCommand(hints, `events ${env.run_id}`)}\n`
          : unwritten.length
            ? `not persisted: the run changed ${unwritten.length} path(s) (${unwritten.slice(0, 5).join(", ")}${unwritten.length > 5 ? ", …" : ""}) that the goal workspace does not hold, and todo run writes nothing back, so todo done refuses it (rule durable_writeback_before_done); a governed turn runs ${todoId} and commits its change with its completion: ${hintCommand(hints, `goal tick ${goalId}`)}\n`
            : `evidence (the run changed nothing: the goal workspace already holds its outcome): ${hintCommand(hints, `todo done ${goalId} ${todoId} --evidence ${env.run_id}`)}\n`,
      );
      io.out(`${storeLine(where)}\n`);
    }
    return exitCodeOf(env.status);
  });
}
