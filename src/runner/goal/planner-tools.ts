import { z } from "zod";
import type { ToolSpec } from "../../core/agent/model-boundary.js";
import type { GoalState } from "../../core/goal/goal-state-shape.js";
import { acceptanceReport, type Obligation } from "../../core/goal/obligations.js";
import { obligationId } from "../../core/goal/replan.js";

/**
 * The planner turn's tools: the model proposes, loopgate admits. Each call is a proposal
 * the goal decider checks as a guarded transition; a refusal comes back to the model as the tool result.
 */
const Todo = z
  .object({
    id: z.string().describe("a new todo id: todo_ followed by 3 to 64 characters of [a-z0-9_-]"),
    content: z.string().min(1).max(4000),
    class: z.enum(["advancement_task", "user_gate", "user_action", "blocker"]),
    task: z
      .string()
      .optional()
      .describe("advancement_task: the task file (relative to the goal file) whose SUCCESS proves it"),
    decision_scope: z.string().optional().describe("user_gate: the decision it covers"),
    depends_on: z.array(z.string()).optional(),
    successor_of: z
      .string()
      .optional()
      .describe("the todo this one follows up (a monitor, a cleared blocker)"),
    unblocks_todo_id: z
      .string()
      .optional()
      .describe("a blocker's target: the todo it holds back until this one is done"),
  })
  .strict();
export type ProposedTodo = z.infer<typeof Todo>;

export const ProposeTodos = z.object({ todos: z.array(Todo).min(1).max(20) }).strict();
export const PatchVision = z
  .object({
    kind: z
      .enum(["patch", "unchanged", "close"])
      .describe("patch: the route changes; unchanged: the route holds (say why); close: this stage is done"),
    route: z.string().max(4000).optional().describe("patch: the whole new route"),
    patch: z.string().max(2000).optional().describe("patch: what changed, in a few lines"),
    reason: z.string().min(1).max(2000),
  })
  .strict();
export const DeclareNoFollowup = z.object({ rationale: z.string().min(1).max(2000) }).strict();
export const ChangeAcceptance = z
  .object({
    add: z
      .array(
        z
          .object({
            task: z.string().min(1).describe("a task file, relative to the goal file"),
            gates: z.array(z.string()).min(1).optional().describe("only these gates of it prove the item"),
            id: z.string().optional().describe("a short id (default: the task path and #gates)"),
          })
          .strict(),
      )
      .max(10)
      .optional(),
    retire: z.array(z.string()).max(10).optional().describe("ids of acceptance items that no longer apply"),
    reason: z.string().min(1).max(2000),
  })
  .strict();

export const PLANNER_TOOLS: readonly ToolSpec[] = [
  {
    name: "propose_todos",
    description:
      "Propose new todos for the goal. Each is checked by loopgate (ids, classes, task files, dependencies); a refused one is returned with the rule it breaks.",
    inputSchema: ProposeTodos,
  },
  {
    name: "patch_vision",
    description:
      "State the route: kind=patch with the new route and what changed (only together with a todo change), kind=unchanged with the reason the route holds, or kind=close (needs a successor todo).",
    inputSchema: PatchVision,
  },
  {
    name: "change_acceptance",
    description:
      "Change what proves the goal: add acceptance items (task files, optionally some of their gates) or retire items by id, with the reason. Only together with a vision statement (patch or unchanged): the route is re-read against the new acceptance.",
    inputSchema: ChangeAcceptance,
  },
  {
    name: "declare_no_followup",
    description:
      "Declare that the goal needs no further work, with the rationale (not together with new todos). Closure still needs every acceptance item proved.",
    inputSchema: DeclareNoFollowup,
  },
];

/** The planner turn's system prompt. */
export const PLANNER_SYSTEM = `You are the planner of a loopgate goal. A replan obligation is open: the route as planned does not
reach acceptance, or a monitor or a cleared blocker asks for new work. Answer it with a real delta, using the tools:
- propose_todos: new todos (an advancement_task names the task file whose SUCCESS proves it);
- patch_vision: kind=patch with the new route (only together with todos), kind=unchanged with the reason the
  route holds, or kind=close when this stage is done (needs a successor todo);
- change_acceptance: what proves the goal changed (items added or retired), with the reason; it comes with a
  vision statement (patch or unchanged), read against the new acceptance;
- declare_no_followup: nothing more is needed, with the rationale.
loopgate checks every call and tells you when it refuses one, naming the rule. Stop (reply without a tool call)
when your answer is complete. An answer without a delta is recorded as replan_noop and the obligation stays open.`;

/** The opening message: the goal, the obligation, acceptance, the todos and the current route. */
export function briefing(state: GoalState, o: Obligation): string {
  const todos = state.order
    .map((id) => state.todos[id])
    .map((t) => `- ${t?.id} [${t?.class}, ${t?.status}] ${t?.content.split("\n")[0]}`)
    .join("\n");
  const acc = acceptanceReport(state)
    .map(
      (a) =>
        `- ${a.id} (${a.ref}): ${a.proved ? "proved" : a.latest ? `ended ${a.latest.status}` : "not run"}`,
    )
    .join("\n");
  const v = state.visions[state.agent?.agent_id ?? ""];
  return [
    `Goal ${state.goalId}: ${state.objective}`,
    `Obligation ${obligationId(o)}: ${o.detail}`,
    `Acceptance on revision ${state.revision}:\n${acc || "(none)"}`,
    `Todos:\n${todos || "(none)"}`,
    `Current route: ${v ? v.route : "(no vision recorded yet: a patch records the first route)"}`,
  ].join("\n\n");
}
