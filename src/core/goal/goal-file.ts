import { LineCounter } from "yaml";
import { z } from "zod";
import { parseDuration } from "../kernel/duration.js";
import { formatPath, InputError } from "../kernel/errors.js";
import { Timestamp } from "../kernel/event-parts.js";
import { lineOf, parseYamlSource } from "../kernel/yaml-source.js";

// The goal file (docs/reference/goal-file.md): what a goal is for, how its acceptance is proved, the folder its
// workspace starts from, who does its work, its budget and its todos. Pure: paths stay as written
// (relative to the goal file); runner/goal/load-goal.ts resolves and checks them.

const duration = z.union([z.string(), z.number()]).refine((v) => parseDuration(v) !== null, {
  message: 'expected a duration such as "30s", "5m", "24h" or a number of seconds',
});
const relPath = z.string().min(1);
const scope = z.string().regex(/^[a-z0-9][a-z0-9_.:-]{0,63}$/, "lower-case letters, digits, _ . : - only");

/** A todo id: `todo_` and 3 to 64 lower-case letters, digits, `_` or `-`. */
export const TODO_ID = /^todo_[a-z0-9_-]{3,64}$/;
const todoId = z.string().regex(TODO_ID, "a todo id is todo_ followed by 3 to 64 of [a-z0-9_-]");

/** The classes of todo. */
export const TODO_CLASSES = [
  "advancement_task",
  "continuous_monitor",
  "user_gate",
  "user_action",
  "blocker",
] as const;
export type TodoClass = (typeof TODO_CLASSES)[number];

/** A monitor's poll: a command run like a gate, a cadence and a bounded stop (used by governed turns). */
const Poll = z
  .object({
    run: z.array(z.string().min(1)).min(1, "run needs at least the program to start"),
    every: duration,
    timeout: duration.default("60s"),
    expires_at: Timestamp.optional(),
    max_no_change_before_replan: z.number().int().positive().optional(),
    /** A stop condition, written as for `todo defer --until`: when it holds the monitor completes. */
    resume_when: z.string().min(1).optional(),
    /**
     * After each poll with no material change (or a failed one) the wait grows by `factor`, up to `max`;
     * a change resets it to `every`. Default { factor: 2, max: 8 × every }; factor 1 keeps a fixed cadence.
     */
    backoff: z
      .object({ factor: z.number().min(1).max(10), max: duration.optional() })
      .strict()
      .optional(),
    /** Failed polls in a row after which the monitor stops and its todo is blocked for a person (default 3). */
    max_failures: z.number().int().positive().max(100).optional(),
  })
  .strict();

const Todo = z
  .object({
    id: todoId,
    content: z.string().min(1).max(4000),
    class: z.enum(TODO_CLASSES),
    /** advancement_task: the task file whose SUCCESS on the goal workspace is this todo's evidence. */
    task: relPath.optional(),
    /** user_gate: the decision it covers. */
    decision_scope: scope.optional(),
    /** Scopes that must be approved before this todo may be selected. */
    required_decision_scopes: z.array(scope).default([]),
    depends_on: z.array(todoId).default([]),
    /** A blocker's target: the todo it holds back until it is cleared (a handoff relation). */
    unblocks_todo_id: todoId.optional(),
    poll: Poll.optional(),
    /** user_gate: it covers every action of the goal, not one scope. */
    global_gate: z.boolean().optional(),
  })
  .strict();
export type GoalFileTodo = z.infer<typeof Todo>;

/** Who does the goal's work: the same forms as `loopgate run` (--model, --builder, --oracle, --noop). */
const Builder = z.union([
  z.object({ model: z.string().min(1) }).strict(),
  z.object({ command: z.string().min(1) }).strict(),
  z.enum(["oracle", "noop"]),
]);
export type GoalBuilder = z.infer<typeof Builder>;

/**
 * The model of the goal's planner turns (replan obligations), in the forms of --model; a scripted or
 * replay file resolves against the goal file's folder. Default: the builder's model, if it has one.
 */
const Planner = z
  .object({
    model: z
      .string()
      .regex(
        /^(anthropic|openai|openai-compatible|scripted|replay):\S/,
        "a model spec: anthropic:MODEL, openai:MODEL, openai-compatible:MODEL, scripted:FILE or replay:FILE",
      ),
  })
  .strict();
export type GoalPlanner = z.infer<typeof Planner>;

const AcceptanceItem = z
  .object({
    /** A short name for the item (goal acceptance retire GOAL ID); default: the task path (and #gates). */
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.:-]{0,63}$/, "lower-case letters, digits, _ . : - only")
      .optional(),
    /** A task file; its gates (or the listed ones) must pass on the goal workspace's current revision. */
    task: relPath,
    gates: z
      .array(z.string().regex(/^[a-z0-9][a-z0-9_-]*$/))
      .min(1)
      .optional(),
  })
  .strict();

/** The occurrences a notify target can be told about (core/goal/notify.ts). */
const NotifyOn = z.enum(["gate_waiting", "terminal", "blocked_health"]);
const notifyCommon = {
  /** A short name (default: `command-N` or `webhook-N`, N its place in the list from 1). */
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "lower-case letters, digits, _ . - only")
    .optional(),
  /** What it is told about (default: all three). */
  on: z.array(NotifyOn).min(1).optional(),
  timeout: duration.default("10s"),
  retry: z
    .object({
      attempts: z.number().int().min(1).max(20).default(5),
      backoff: duration.default("2s"),
      max_backoff: duration.default("10m"),
    })
    .strict()
    .optional(),
};
/** A notify target: a command (argv, run in the goal file's folder) or a webhook (a URL, or the env var holding it). */
const NotifyTargetFile = z.union([
  z
    .object({
      ...notifyCommon,
      command: z.array(z.string().min(1)).min(1, "command needs at least the program"),
    })
    .strict(),
  z
    .object({ ...notifyCommon, url: z.string().url("a webhook url such as https://hooks.example.com/x") })
    .strict(),
  z
    .object({
      ...notifyCommon,
      url_env: z
        .string()
        .regex(/^[A-Z_][A-Z0-9_]*$/, "an environment variable name such as SLACK_WEBHOOK_URL"),
    })
    .strict(),
]);
export type GoalFileNotify = z.infer<typeof NotifyTargetFile>;

/** The goal file contract, as zod. */
export const GoalFileSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "lower-case letters, digits, '.', '-' and '_' only"),
    objective: z.string().min(1).max(4000),
    acceptance: z
      .array(AcceptanceItem)
      .min(1, "a goal needs acceptance evidence: without it nothing can prove it closed"),
    workspace: relPath,
    /** The agent's first route (its Vision), recorded with the goal as its first checkpoint. */
    vision: z.string().min(1).max(4000).optional(),
    builder: Builder.optional(),
    planner: Planner.optional(),
    budget: z
      .object({
        window: duration.default("24h"),
        turns: z.number().int().positive().optional(),
        tokens: z.number().int().positive().optional(),
        cost_usd: z.number().positive().optional(),
      })
      .strict()
      .default({ window: "24h" }),
    todos: z.array(Todo).min(1, "a goal needs at least one todo"),
    /** Who is told when a gate waits on a person, the goal closes, or it becomes blocked_health. */
    notify: z.array(NotifyTargetFile).max(16).optional(),
  })
  .strict()
  .superRefine((g, ctx) => {
    const ids = new Map<string, number>();
    g.todos.forEach((t, i) => {
      if (ids.has(t.id))
        ctx.addIssue({ code: "custom", path: ["todos", i, "id"], message: `duplicate todo id ${t.id}` });
      ids.set(t.id, i);
    });
    const scopes = new Set(g.todos.flatMap((t) => (t.decision_scope ? [t.decision_scope] : [])));
    g.todos.forEach((t, i) => {
      const at = (k: string) => ["todos", i, k];
      const issue = (k: string, message: string) => ctx.addIssue({ code: "custom", path: at(k), message });
      if (t.class === "advancement_task" && !t.task)
        issue("task", "an advancement_task needs a task file: its SUCCESS is the only evidence it is done");
      if (t.class !== "advancement_task" && t.task)
        issue("task", `only an advancement_task has a task file (this is a ${t.class})`);
      if (t.class === "user_gate" && !t.decision_scope && !t.global_gate)
        issue("decision_scope", "a user_gate needs the decision_scope it covers (or global_gate: true)");
      if (t.class !== "user_gate" && t.global_gate)
        issue("global_gate", `only a user_gate can be goal-wide (this is a ${t.class})`);
      if (t.class !== "user_gate" && t.decision_scope)
        issue("decision_scope", `only a user_gate has a decision_scope (this is a ${t.class})`);
      if (t.class === "continuous_monitor") {
        if (!t.poll) issue("poll", "a continuous_monitor needs a poll (run, every, and a bounded stop)");
        else if (!t.poll.expires_at && !t.poll.max_no_change_before_replan)
          issue(
            "poll",
            "a monitor needs a bounded stop: poll.expires_at or poll.max_no_change_before_replan",
          );
        else {
          const every = parseDuration(t.poll.every) ?? 0;
          const max = t.poll.backoff?.max === undefined ? null : parseDuration(t.poll.backoff.max);
          if (max !== null && max < every)
            ctx.addIssue({
              code: "custom",
              path: ["todos", i, "poll", "backoff", "max"],
              message: `backoff.max (${String(t.poll.backoff?.max)}) is shorter than every (${String(t.poll.every)})`,
            });
        }
      } else if (t.poll) issue("poll", `only a continuous_monitor polls (this is a ${t.class})`);
      t.required_decision_scopes.forEach((s, j) => {
        if (!scopes.has(s))
          ctx.addIssue({
            code: "custom",
            path: ["todos", i, "required_decision_scopes", j],
            message: `no user_gate covers the scope ${s}; declared scopes: ${[...scopes].join(", ") || "none"}`,
          });
      });
      if (t.unblocks_todo_id !== undefined && (!ids.has(t.unblocks_todo_id) || t.unblocks_todo_id === t.id))
        issue(
          "unblocks_todo_id",
          t.unblocks_todo_id === t.id
            ? "a todo cannot unblock itself"
            : `no todo ${t.unblocks_todo_id} in this goal`,
        );
      t.depends_on.forEach((d, j) => {
        if (!ids.has(d) || d === t.id)
          ctx.addIssue({
            code: "custom",
            path: ["todos", i, "depends_on", j],
            message: d === t.id ? "a todo cannot depend on itself" : `no todo ${d} in this goal`,
          });
      });
    });
    const accIds = new Set<string>();
    g.acceptance.forEach((a, i) => {
      const id = a.id ?? (a.gates ? `${a.task}#${a.gates.join(",")}` : a.task);
      if (accIds.has(id))
        ctx.addIssue({ code: "custom", path: ["acceptance", i], message: `duplicate acceptance item ${id}` });
      accIds.add(id);
    });
    const notifyIds = new Set<string>();
    g.notify?.forEach((t, i) => {
      const id = t.id ?? `${"command" in t ? "command" : "webhook"}-${i + 1}`;
      if (notifyIds.has(id))
        ctx.addIssue({ code: "custom", path: ["notify", i, "id"], message: `duplicate notify id ${id}` });
      notifyIds.add(id);
    });
    const cycle = dependencyCycle(g.todos);
    if (cycle)
      ctx.addIssue({
        code: "custom",
        path: ["todos", g.todos.findIndex((t) => t.id === cycle[0]), "depends_on"],
        message: `depends_on forms a cycle: ${cycle.join(" → ")}`,
      });
  });

export type GoalFile = z.infer<typeof GoalFileSchema>;

/** The first cycle in the depends_on graph, as ids from a todo back to itself; null when there is none. */
function dependencyCycle(todos: readonly GoalFileTodo[]): string[] | null {
  const deps = new Map(todos.map((t) => [t.id, t.depends_on] as const));
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === "done") return null;
    if (state.get(id) === "visiting") return [...path.slice(path.indexOf(id)), id];
    state.set(id, "visiting");
    path.push(id);
    for (const d of deps.get(id) ?? []) {
      if (!deps.has(d) || d === id) continue;
      const found = visit(d);
      if (found) return found;
    }
    path.pop();
    state.set(id, "done");
    return null;
  };
  for (const t of todos) {
    const found = visit(t.id);
    if (found) return found;
  }
  return null;
}

/**
 * Parses a goal file's text (YAML or JSON). Errors name the file, the line and the field:
 * `goal.yaml:12: todos[2].task: an advancement_task needs a task file …`.
 */
export function parseGoalFile(text: string, file: string): GoalFile {
  const lineCounter = new LineCounter();
  const { doc, raw } = parseYamlSource(text, file, lineCounter);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new InputError(
      "a goal file is a mapping with id, objective, acceptance, workspace and todos",
      file,
    );
  const result = GoalFileSchema.safeParse(raw);
  if (result.success) return result.data;
  const messages = result.error.issues.slice(0, 5).map((issue) => {
    const line = lineOf(doc, issue.path, lineCounter);
    return `${line ? `${file}:${line}` : file}: ${formatPath(issue.path)}: ${issue.message}`;
  });
  const more = result.error.issues.length > 5 ? `\n(and ${result.error.issues.length - 5} more)` : "";
  throw new InputError(`invalid goal file\n${messages.join("\n")}${more}`);
}
