import { z } from "zod";
import { TODO_TOOL } from "../../core/agent/step-appraisal.js";
import type { LoopgateEvent } from "../../core/events/loopgate-event.js";
import type { AgentTool } from "../tools/tool.js";
import { elapsedMs } from "../tools/tool-result.js";
import { applyTodoWrite, currentPlan, renderPlan } from "./plan.js";

const item = z.strictObject({
  content: z.string().min(1).max(2000).describe("The step, in a few words."),
  status: z.enum(["pending", "in_progress", "completed"]),
  expect: z.string().max(2000).optional().describe("One sentence: what will be true when the step is done."),
  check: z
    .string()
    .min(1)
    .max(4000)
    .nullable()
    .optional()
    .describe(
      "A shell command whose exit code says whether the step is done; run by loopgate when the step is completed. " +
        "null withdraws it while the step is open; once the step is completed its check is frozen.",
    ),
  expect_calls: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .describe("How many tool calls you expect the step to take."),
});

const schema = z.strictObject({
  items: z
    .array(item)
    .max(100)
    .refine((xs) => new Set(xs.map((x) => x.content)).size === xs.length, {
      message: "each step's content must be unique: a step is known by its words",
    })
    .describe("The whole plan, every step, in order (each write replaces the list)."),
});

/** What the plan tool reads, bound when it is created: the run's events so far and whether step checks run. */
export interface TodoToolDeps {
  attempt: number;
  events(): readonly LoopgateEvent[];
  checks: boolean;
}

/**
 * The plan tool: the model writes its steps; loopgate checks each one when it is ticked off. Its result
 * echoes the plan and carries the `todo_written` fact (the write applied to the plan so far).
 */
export function createTodoTool(d: TodoToolDeps): AgentTool<typeof schema> {
  return {
    name: TODO_TOOL,
    description:
      "Write your plan: the whole list of steps each time, each pending, in_progress or completed. Mark a step " +
      "in_progress before working on it and completed when it is done. A step may say what will be true when it is " +
      "done (expect), a shell command that checks it (check: loopgate runs it when the step is completed), and " +
      "how many tool calls it will take (expect_calls). loopgate reports what it sees about a completed step in " +
      "the result; it never changes your plan.",
    schema,
    mutating: false,
    facts: true,
    async execute(args, ctx) {
      const started = performance.now();
      const w = applyTodoWrite(currentPlan(d.events()), args.items);
      return {
        result: {
          content: renderPlan(w, d.checks),
          isError: false,
          exitCode: null,
          durationMs: elapsedMs(started),
          subject: TODO_TOOL,
        },
        events: [{ type: "todo_written", data: { attempt: d.attempt, call_id: ctx.callId, ...w } }],
      };
    },
  };
}
