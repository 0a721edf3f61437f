import { dirname } from "node:path";
import { acceptanceReport } from "../../../core/goal/obligations.js";
import { InputError } from "../../../core/kernel/errors.js";
import { goalState } from "../../../runner/goal/goal-engine.js";
import { openGoal, writeGoal } from "../../../runner/goal/goal-service.js";
import { acceptanceItemOf } from "../../../runner/goal/goal-spec.js";
import type { CommandIO } from "../../output/io.js";
import { expectedRevision, type GoalFlags, goalStore, guarded, printWrite, withStore } from "./goal.js";
import { actorOf } from "./goal-actor.js";

/** Flags of `loopgate goal acceptance`. */
export interface AcceptanceFlags extends GoalFlags {
  reason?: string;
  gates?: string[];
  id?: string;
}

export type AcceptanceVerb = "show" | "add" | "retire";

/**
 * `loopgate goal acceptance show|add|retire GOAL [ITEM]`: acceptance that can change after `goal new`.
 * add: a task file (relative to the current folder) and optionally some of its gates, as a new item;
 * retire: an item by its id. Each change is one guarded write (--expect-revision as for every goal
 * write) that bumps the acceptance version: every vision checkpoint read against the old one is stale
 * and a replan obligation asks to re-read it (goal vision unchanged|patch).
 */
export async function goalAcceptanceCommand(
  io: CommandIO,
  verb: AcceptanceVerb,
  goalId: string,
  item: string | undefined,
  flags: AcceptanceFlags,
): Promise<number> {
  const where = goalStore(flags);
  const dir = where.dir;
  if (verb === "show") return withStore(where, "read", (store) => show(io, store, dir, goalId, flags));
  const reason = flags.reason;
  if (!reason?.trim())
    throw new InputError(`loopgate goal acceptance ${verb} needs --reason TEXT`, "--reason");
  if (item === undefined)
    throw new InputError(
      `loopgate goal acceptance ${verb} needs ${verb === "add" ? "TASK_FILE" : "ITEM"}`,
      verb,
    );
  if (verb === "retire" && (flags.gates !== undefined || flags.id !== undefined))
    throw new InputError(
      "goal acceptance retire takes ITEM alone (--gates and --id belong to add)",
      "--gates",
    );
  const writer = actorOf(flags);
  return guarded(io, flags.json, () =>
    withStore(where, false, async (store) => {
      let what: string;
      let command: Parameters<typeof writeGoal>[3];
      if (verb === "add") {
        const read = await openGoal(store, dir, goalId);
        // An id is relative to the goal file's folder, as the goal file's own items are.
        const base = read.view.sourcePath ? dirname(read.view.sourcePath) : process.cwd();
        const spec = acceptanceItemOf(item, flags.gates ?? null, flags.id, base, "TASK_FILE");
        command = { kind: "command", command: { type: "add_acceptance", item: spec, reason } };
        what = `acceptance ${spec.id} added`;
      } else {
        command = { kind: "command", command: { type: "retire_acceptance", acceptanceId: item, reason } };
        what = `acceptance ${item} retired`;
      }
      const r = await writeGoal(store, dir, goalId, command, expectedRevision(flags), writer);
      printWrite(
        io,
        flags,
        goalId,
        r,
        `${what}; vision checkpoints read against the old acceptance are stale`,
      );
      return 0;
    }),
  );
}

async function show(
  io: CommandIO,
  store: Parameters<typeof openGoal>[0],
  dir: string,
  goalId: string,
  flags: AcceptanceFlags,
): Promise<number> {
  const read = await openGoal(store, dir, goalId);
  const state = goalState(read.log.events);
  const items = acceptanceReport(state).map((a) => ({
    id: a.id,
    proved: a.proved,
    latest: a.latest ? { run_id: a.latest.runId, status: a.latest.status } : null,
  }));
  const retired = read.log.events.flatMap((e) =>
    e.type === "goal_acceptance_changed"
      ? (e.data.delta ?? [])
          .filter((d) => d.change === "retired")
          .map((d) => ({ id: d.item_id, reason: e.data.reason }))
      : [],
  );
  if (flags.json) {
    io.out(
      `${JSON.stringify({ goal: goalId, revision: state.revision, acceptance_version: state.acceptanceVersion, items, retired })}\n`,
    );
    return 0;
  }
  const lines = [
    `goal ${goalId}: acceptance version ${state.acceptanceVersion}, revision ${state.revision.slice(0, 12)}`,
  ];
  for (const i of items)
    lines.push(
      `  ${i.proved ? "✓" : "·"} ${i.id}: ${i.proved ? "proved" : i.latest ? `ended ${i.latest.status} (run ${i.latest.run_id})` : "not run on this revision"}`,
    );
  for (const r of retired) lines.push(`  retired: ${r.id} (${r.reason})`);
  io.out(`${lines.join("\n")}\n`);
  return 0;
}
