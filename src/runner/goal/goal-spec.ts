import { statSync } from "node:fs";
import { relative, resolve } from "node:path";
import type { GoalBuilder, GoalFileTodo } from "../../core/goal/goal-file.js";
import { parseResumeCondition } from "../../core/goal/todo-rules.js";
import { DEFAULT_MAX_FAILURES } from "../../core/goal/turn/monitor.js";
import { parseDuration } from "../../core/kernel/duration.js";
import { InputError } from "../../core/kernel/errors.js";
import type { LoadedGoal } from "./load-goal.js";
import { taskOrError } from "./load-goal.js";

// The goal file, resolved, as the facts the goal stream records (core/goal's goal_created and todo_added).

/** A task reference as the goal stream records it: the file, its task id and the digest it had. */
export interface TaskRefData {
  path: string;
  task_id: string;
  digest: string;
}

/** A resume condition as the goal stream records it. */
export type ResumeConditionData =
  | { kind: "at"; at: string }
  | { kind: "todo_status"; todo_id: string; status: "open" | "done" | "blocked" | "deferred" }
  | { kind: "gate_decision"; gate_id: string; decision: "approved" | "rejected" | "cancelled" | "any" };

/** A task file as a reference: it must load (the error names where it was named). */
export function taskRef(path: string, where: string): TaskRefData {
  const loaded = taskOrError(path, where);
  return { path: loaded.file, task_id: loaded.task.id, digest: loaded.digest };
}

const seconds = (d: string | number) => Math.max(1, Math.round((parseDuration(d) ?? 1000) / 1000));

/** Default growth of a monitor's wait per quiet poll, and its bound in cadences (docs/reference/goal-file.md). */
export const MONITOR_BACKOFF_FACTOR = 2;
export const MONITOR_BACKOFF_MAX_CADENCES = 8;

/** A poll's backoff and failure bound, resolved once with their defaults (recorded in the todo's spec). */
function monitorBackoff(poll: NonNullable<GoalFileTodo["poll"]>) {
  const every = seconds(poll.every);
  const max =
    poll.backoff?.max === undefined ? every * MONITOR_BACKOFF_MAX_CADENCES : seconds(poll.backoff.max);
  return {
    backoff: { factor: poll.backoff?.factor ?? MONITOR_BACKOFF_FACTOR, max_seconds: Math.max(every, max) },
    max_failures: poll.max_failures ?? DEFAULT_MAX_FAILURES,
  };
}

/** One todo of the goal file as a todo spec. */
export function todoSpec(loaded: LoadedGoal, t: GoalFileTodo, index: number) {
  const task = loaded.tasks[t.id];
  return {
    id: t.id,
    content: t.content,
    class: t.class,
    ...(task ? { task: taskRef(task, `${loaded.file}: todos[${index}].task`) } : {}),
    ...(t.decision_scope ? { decision_scope: t.decision_scope } : {}),
    ...(t.global_gate ? { global_gate: true } : {}),
    ...(t.required_decision_scopes.length ? { required_decision_scopes: t.required_decision_scopes } : {}),
    ...(t.depends_on.length ? { depends_on: t.depends_on } : {}),
    ...(t.unblocks_todo_id ? { unblocks_todo_id: t.unblocks_todo_id } : {}),
    ...(t.poll
      ? {
          monitor: {
            argv: t.poll.run,
            cadence_seconds: seconds(t.poll.every),
            timeout_seconds: seconds(t.poll.timeout),
            ...(t.poll.expires_at ? { expires_at: t.poll.expires_at } : {}),
            ...(t.poll.max_no_change_before_replan
              ? { max_no_change_before_replan: t.poll.max_no_change_before_replan }
              : {}),
            ...monitorBackoff(t.poll),
            ...(t.poll.resume_when
              ? {
                  resume_when: parseResumeCondition(
                    t.poll.resume_when,
                    `${loaded.file}: todos[${index}].poll.resume_when`,
                  ),
                }
              : {}),
          },
        }
      : {}),
  };
}

/** Who does the goal's work, as recorded: an agent on a model, or a builder command (oracle, noop). */
export function goalAgent(
  b: GoalBuilder | undefined,
  planner?: { model: string; dir: string; where: string },
) {
  const p = planner ? { planner_model: plannerSpec(planner.model, planner.dir, planner.where) } : {};
  if (b === undefined) return { agent_id: "operator", kind: "builder" as const, ...p };
  if (b === "oracle" || b === "noop")
    return { agent_id: b, kind: "builder" as const, command: `@${b}`, ...p };
  if ("model" in b) return { agent_id: "agent", kind: "agent" as const, model: b.model, ...p };
  return { agent_id: "builder", kind: "builder" as const, command: b.command, ...p };
}

/** A planner model spec as recorded: a scripted/replay file resolved against `dir` and required to exist. */
function plannerSpec(spec: string, dir: string, where: string): string {
  const m = /^(scripted|replay):(.+)$/.exec(spec.trim());
  if (!m) return spec.trim();
  const file = resolve(dir, m[2] as string);
  if (!statSync(file, { throwIfNoEntry: false })?.isFile())
    throw new InputError(`the planner's ${m[1]} model file ${file} is not there`, where);
  return `${m[1]}:${file}`;
}

/** The acceptance items: one per task (and gate subset), each with the task's digest. */
export function acceptanceItems(loaded: LoadedGoal) {
  return loaded.acceptance.map((a, i) => {
    const ref = taskRef(a.task, `${loaded.file}: acceptance[${i}].task`);
    const rel = relative(loaded.dir, a.task);
    return {
      id: loaded.goal.acceptance[i]?.id ?? (a.gates ? `${rel}#${a.gates.join(",")}` : rel),
      kind: "task" as const,
      ref: a.gates ? `${a.task}#${a.gates.join(",")}` : a.task,
      digest: ref.digest,
    };
  });
}

/** The budget as recorded. */
export function budget(loaded: LoadedGoal) {
  const b = loaded.goal.budget;
  return {
    window_seconds: seconds(b.window),
    ...(b.turns ? { turns_per_window: b.turns } : {}),
    ...(b.tokens ? { max_tokens: b.tokens } : {}),
    ...(b.cost_usd ? { max_cost_usd: b.cost_usd } : {}),
  };
}

/**
 * One acceptance item from a task file (resolved against the current folder; and optionally some of its
 * gates), as `goal acceptance add` and a planner's change_acceptance name it: the task must load and have
 * those gates; its id is `id`, else the task's path relative to `idBase` (the goal file's folder) with `#gates`.
 */
export function acceptanceItemOf(
  taskPath: string,
  gates: readonly string[] | null,
  id: string | undefined,
  idBase: string,
  where: string,
) {
  const baseDir = idBase;
  const task = resolve(taskPath);
  const loaded = taskOrError(task, where);
  const declared = loaded.task.gates.map((g) => g.id);
  for (const g of gates ?? [])
    if (!declared.includes(g))
      throw new InputError(`${loaded.task.id} has no gate ${g}; declared: ${declared.join(", ")}`, where);
  const suffix = gates?.length ? `#${gates.join(",")}` : "";
  if (id !== undefined && !/^[a-z0-9][a-z0-9_.:-]{0,63}$/.test(id))
    throw new InputError(
      `${JSON.stringify(id)} is not an acceptance id: lower-case letters, digits, _ . : - only`,
      where,
    );
  return {
    id: id ?? `${relative(baseDir, task)}${suffix}`,
    kind: "task" as const,
    ref: `${task}${suffix}`,
    digest: loaded.digest,
  };
}
