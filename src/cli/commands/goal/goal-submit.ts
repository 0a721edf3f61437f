import { InputError } from "../../../core/kernel/errors.js";
import { openGoal } from "../../../runner/goal/goal-service.js";
import type { RunFlags } from "../../../runner/host/run-flags.js";
import type { JobOptions } from "../../../store/open-store.js";
import { storeFrom } from "../../output/context.js";
import { hintCommand, hintsFor } from "../../output/hints.js";
import type { CommandIO } from "../../output/io.js";
import { CARRIED, postgresStoreFrom } from "../submit.js";
import { guarded } from "./goal.js";

/**
 * `loopgate goal submit GOAL --store postgres://…`: queues the goal's next turn (a job of kind "goal
 * turn") on the run queue. A worker that claims it runs one governed tick under the goal's turn lease
 * and queues the turn after it at the scheduler's wake-up, so the goal advances one turn at a time,
 * whichever workers share the database, until it is terminal, stopped or waiting on a person (that
 * person's next write to the goal queues it again: goal-service `requeueSubmitted`). One turn per goal is
 * queued at a time: submitting a goal whose turn is already queued prints that job. The run flags given (builder, sandbox, …) are carried to every turn.
 */
export async function goalSubmitCommand(
  io: CommandIO,
  goalId: string,
  flags: RunFlags & { json?: boolean },
): Promise<number> {
  const where = storeFrom(flags.store);
  if (where.kind !== "postgres")
    throw new InputError(
      `goal submit enqueues turns on the run queue, which lives in PostgreSQL: give --store postgres://USER@HOST[:PORT]/DATABASE; to advance ${goalId} from this folder, run ${hintCommand(hintsFor(where), `goal run ${goalId}`)}`,
      "loopgate goal submit",
    );
  const options: JobOptions = { cwd: process.cwd() };
  for (const name of CARRIED) {
    const v = flags[name];
    if (v !== undefined) options[name] = v;
  }
  const { store } = await postgresStoreFrom(flags.store, "loopgate goal submit");
  try {
    return await guarded(io, flags.json, async () => {
      const { view } = await openGoal(store, where.dir, goalId);
      const r = await store.queue().submitGoalTurn(goalId, options, null);
      const fresh = r.mode === "host_updated";
      if (flags.json)
        io.out(
          `${JSON.stringify({ job_id: r.job.jobId, kind: "goal_turn", goal: goalId, queued: fresh, runtime_state: view.runtimeState, store: where.label }, null, 2)}\n`,
        );
      else {
        io.out(`${r.job.jobId}\n`);
        io.err(
          fresh
            ? `queued the next turn of goal ${goalId} (${view.runtimeState}); ${hintCommand(hintsFor(where), "worker")} runs it\n`
            : `goal ${goalId} already has a turn queued (${r.job.jobId}); nothing added\n`,
        );
      }
      return 0;
    });
  } finally {
    await store.close();
  }
}
