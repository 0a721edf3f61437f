import { resolve } from "node:path";
import { TODO_CLASSES, TODO_ID } from "../../../core/goal/goal-file.js";
import { parseResumeCondition } from "../../../core/goal/todo-rules.js";
import { InputError } from "../../../core/kernel/errors.js";
import type { GoalIntent, TodoSpecData } from "../../../runner/goal/goal-engine.js";
import { writeGoal } from "../../../runner/goal/goal-service.js";
import { taskRef } from "../../../runner/goal/goal-spec.js";
import { doneIntent } from "../../../runner/goal/todo-evidence.js";
import type { CommandIO } from "../../output/io.js";
import { expectedRevision, type GoalFlags, goalStore, guarded, printWrite, withStore } from "./goal.js";
import { actorOf } from "./goal-actor.js";

/** Flags the todo and gate commands read. */
export interface TodoFlags extends GoalFlags {
  content?: string;
  class?: string;
  task?: string;
  scope?: string;
  requires?: string[];
  "depends-on"?: string[];
  unblocks?: string;
  evidence?: string;
  reason?: string;
  rationale?: string;
  until?: string;
}

type TodoVerb = "add" | "done" | "block" | "defer" | "reopen" | "supersede" | "close-no-followup";

const must = (value: string | undefined, flag: string, verb: string): string => {
  if (value === undefined || value.trim() === "")
    throw new InputError(`loopgate ${verb} needs ${flag}`, `loopgate ${verb}`);
  return value;
};

function checkTodoId(id: string, what: string): void {
  if (!TODO_ID.test(id))
    throw new InputError(
      `${JSON.stringify(id)} is not a todo id: todo_ followed by 3 to 64 of [a-z0-9_-]`,
      what,
    );
}

/** A todo spec from the flags of `todo add` / `todo supersede`. */
export function specFromFlags(id: string, flags: TodoFlags, verb: string): TodoSpecData {
  checkTodoId(id, `loopgate ${verb}`);
  const cls = must(flags.class, "--class", verb);
  if (!(TODO_CLASSES as readonly string[]).includes(cls))
    throw new InputError(
      `${JSON.stringify(cls)} is not a class; one of ${TODO_CLASSES.join(", ")}`,
      "--class",
    );
  if (cls === "advancement_task" && flags.task === undefined)
    throw new InputError(
      "an advancement_task needs --task FILE: its SUCCESS is the only evidence it is done",
      "--task",
    );
  if (cls !== "advancement_task" && flags.task !== undefined)
    throw new InputError(`only an advancement_task has a task file (this is a ${cls})`, "--task");
  if (cls === "user_gate" && flags.scope === undefined)
    throw new InputError("a user_gate needs --scope SCOPE, the decision it covers", "--scope");
  if (cls !== "user_gate" && flags.scope !== undefined)
    throw new InputError(`only a user_gate has a decision scope (this is a ${cls})`, "--scope");
  if (cls === "continuous_monitor")
    throw new InputError("a continuous_monitor needs a poll: declare it in the goal file", "--class");
  for (const d of flags["depends-on"] ?? []) checkTodoId(d, "--depends-on");
  return {
    id,
    content: must(flags.content, "--content", verb),
    class: cls as TodoSpecData["class"],
    ...(flags.task !== undefined ? { task: taskRef(resolve(flags.task), "--task") } : {}),
    ...(flags.scope !== undefined ? { decision_scope: flags.scope } : {}),
    ...(flags.requires?.length ? { required_decision_scopes: flags.requires } : {}),
    ...(flags["depends-on"]?.length ? { depends_on: flags["depends-on"] } : {}),
    ...(flags.unblocks !== undefined ? { unblocks_todo_id: flags.unblocks } : {}),
  };
}

/** `loopgate todo add|done|block|defer|reopen|supersede|close-no-followup GOAL TODO …`. */
export async function todoCommand(
  io: CommandIO,
  verb: TodoVerb,
  goalId: string,
  todoId: string,
  successor: string | undefined,
  flags: TodoFlags,
): Promise<number> {
  const where = goalStore(flags);
  const dir = where.dir;
  const name = `todo ${verb}`;
  const writer = actorOf(flags);
  return guarded(io, flags.json, () =>
    withStore(where, false, async (store) => {
      let intent: GoalIntent;
      let what: string;
      switch (verb) {
        case "add":
          intent = { kind: "add", todo: specFromFlags(todoId, flags, name) };
          what = `added ${todoId}`;
          break;
        case "done": {
          const runId = must(flags.evidence, "--evidence RUN", name);
          // The receipt, and what of the run's change the goal workspace lacks (done means persisted).
          intent = await doneIntent(store, dir, goalId, todoId, runId);
          what = `${todoId} is done on the evidence of run ${runId}`;
          break;
        }
        case "block":
          intent = { kind: "block", todoId, reason: must(flags.reason, "--reason TEXT", name) };
          what = `${todoId} is blocked`;
          break;
        case "defer":
          intent = {
            kind: "defer",
            todoId,
            until: parseResumeCondition(must(flags.until, "--until COND", name)),
            note: flags.note ?? "",
          };
          what = `${todoId} is deferred`;
          break;
        case "reopen":
          intent = { kind: "reopen", todoId, note: flags.note ?? "" };
          what = `${todoId} is open again`;
          break;
        case "supersede":
          intent = {
            kind: "supersede",
            todoId,
            successor: specFromFlags(successor as string, flags, name),
            note: flags.note ?? "",
          };
          what = `${todoId} is superseded by ${successor}`;
          break;
        case "close-no-followup":
          intent = {
            kind: "close_no_followup",
            todoId,
            rationale: must(flags.rationale, "--rationale TEXT", name),
          };
          what = `${todoId} is closed with no follow-up`;
          break;
      }
      const r = await writeGoal(store, dir, goalId, intent, expectedRevision(flags), writer);
      printWrite(io, flags, goalId, r, what);
      return 0;
    }),
  );
}

/** `loopgate gate approve|reject|cancel|defer GOAL GATE`. */
export async function gateCommand(
  io: CommandIO,
  verb: "approve" | "reject" | "cancel" | "defer",
  goalId: string,
  gateId: string,
  flags: TodoFlags,
): Promise<number> {
  const where = goalStore(flags);
  const dir = where.dir;
  const writer = actorOf(flags);
  return guarded(io, flags.json, () =>
    withStore(where, false, async (store) => {
      const note = flags.note ?? "";
      if (verb !== "defer" && flags.until !== undefined)
        throw new InputError("only gate defer takes --until", "--until");
      const intent: GoalIntent =
        verb === "defer"
          ? {
              kind: "gate_defer",
              gateId,
              until: parseResumeCondition(must(flags.until, "--until COND", "gate defer")),
              note,
            }
          : {
              kind: "gate",
              gateId,
              decision: verb === "approve" ? "approved" : verb === "reject" ? "rejected" : "cancelled",
              note,
            };
      const r = await writeGoal(store, dir, goalId, intent, expectedRevision(flags), writer);
      printWrite(
        io,
        flags,
        goalId,
        r,
        `gate ${gateId}: ${verb === "defer" ? "deferred" : intent.kind === "gate" ? intent.decision : ""}`,
      );
      return 0;
    }),
  );
}
