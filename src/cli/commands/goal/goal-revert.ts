import { TurnLeaseHeldError } from "../../../core/goal/turn/turn-lease.js";
import { InputError } from "../../../core/kernel/errors.js";
import { revertAcceptedChange } from "../../../runner/goal/turn/compensation.js";
import { hintCommand, hintsFor } from "../../output/hints.js";
import type { CommandIO } from "../../output/io.js";
import { goalFolderStore, goalStore, guarded, withStore } from "./goal.js";
import { actorOf } from "./goal-actor.js";
import { specFromFlags, type TodoFlags } from "./goal-todo.js";

/**
 * `loopgate goal revert GOAL REVISION NEW_TODO --content TEXT --class CLASS [--task FILE] --reason TEXT`:
 * rolls an accepted change back as a compensation — a revert commit on the goal workspace,
 * the successor todo and the `change_compensated` receipt in one goal append. History is never rewritten.
 */
export async function goalRevertCommand(
  io: CommandIO,
  goalId: string,
  revision: string,
  todoId: string,
  flags: TodoFlags & { "agent-id"?: string },
): Promise<number> {
  const dir = goalFolderStore(flags, "goal revert");
  const reason = flags.reason;
  if (!reason?.trim()) throw new InputError("loopgate goal revert needs --reason TEXT", "--reason");
  const successor = specFromFlags(todoId, flags, "goal revert");
  const { by } = actorOf(flags);
  return guarded(io, flags.json, () =>
    withStore(dir, false, async (store) => {
      try {
        const r = await revertAcceptedChange({
          store,
          localDir: dir,
          goalId,
          revision,
          successor,
          reason,
          holder: flags["agent-id"] ?? "operator",
          ...(by !== undefined ? { by } : {}),
        });
        if (flags.json)
          io.out(
            `${JSON.stringify({
              goal: goalId,
              reverted: r.reverted,
              revert_revision: r.revertRevision,
              successor_id: r.successorId,
              reused_commit: r.reusedCommit,
              events: r.events,
            })}\n`,
          );
        else if (r.events.length === 0)
          io.out(
            `${r.reverted.slice(0, 12)} was already compensated by ${r.revertRevision.slice(0, 12)}; ${r.successorId} follows (nothing new recorded)\n`,
          );
        else
          io.out(
            `reverted ${r.reverted.slice(0, 12)}: commit ${r.revertRevision.slice(0, 12)}${r.reusedCommit ? " (found on the branch from an earlier try)" : ""} is the goal's revision; ${r.successorId} takes the work over\nrecorded: ${r.events.join(", ")}\nnext: ${hintCommand(hintsFor(goalStore(flags)), `goal status ${goalId}`)}\n`,
          );
        return 0;
      } catch (e) {
        if (!(e instanceof TurnLeaseHeldError)) throw e;
        if (flags.json) io.out(`${JSON.stringify({ error: "busy", message: e.message })}\n`);
        io.err(`loopgate: busy: ${e.message}; revert once the turn has settled\n`);
        return 1;
      }
    }),
  );
}
