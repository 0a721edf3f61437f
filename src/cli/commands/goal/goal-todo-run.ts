import { DomainError } from "../../../core/kernel/errors.js";
import { openGoal } from "../../../runner/goal/goal-service.js";
import { GoalTaskError, goalTaskFile } from "../../../runner/goal/goal-tasks.js";
import { goalRepo } from "../../../runner/goal/repo/goal-repo.js";
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
 * and revision in the run so `todo done --evidence` can check them.
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
    const { view, facts, tree } = await withStore(where, "read", async (store) => {
      const read = await openGoal(store, dir, goalId);
      const ready =
        read.view.todos.find((t) => t.id === todoId)?.status === "open" && !read.facts.health.length;
      return {
        ...read,
        tree: ready ? await goalRepo(store, dir).tree(goalId, read.view.revision) : "",
      };
    });
    const todo = view.todos.find((t) => t.id === todoId);
    if (!todo) throw new DomainError(`goal ${goalId} has no todo ${todoId}`);
    if (view.activation === "stopped")
      throw new DomainError(
        `goal ${goalId} is stopped (runtime state paused): a stopped goal runs no work; resume it first (${hintCommand(hintsFor(where), `goal resume ${goalId}`)})`,
      );
    if (todo.class !== "advancement_task" || !todo.task)
      throw new DomainError(`${todoId} is a ${todo.class}: only an advancement_task has a task to run`);
    if (todo.status !== "open")
      throw new DomainError(`${todoId} is ${todo.status}: only an open todo is run`);
    if (facts.health.length)
      throw new DomainError(
        `blocked_health: ${facts.health.map((h) => h.detail).join("; ")}; nothing was run`,
      );
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
      io.out(
        env.status === "SUCCESS"
          ? `evidence: ${hintCommand(hints, `todo done ${goalId} ${todoId} --evidence ${env.run_id}`)}\n`
          : `not evidence (${env.status}); audit trail: ${hintCommand(hints, `events ${env.run_id}`)}\n`,
      );
      io.out(`${storeLine(where)}\n`);
    }
    return exitCodeOf(env.status);
  });
}
