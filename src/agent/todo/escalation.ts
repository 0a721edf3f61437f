import { z } from "zod";
import type {
  EscalationDecision,
  EscalationInput,
  EscalationTrigger,
} from "../../core/agent/step-escalation.js";
import { generateWithin } from "../../judge/generate-within.js";
import type { ModelAdapter, ModelResponse } from "../models/model.js";

/** The only answer the reviewer may give; anything else is inconclusive. */
export const EscalationAnswer = z
  .object({
    decision: z.enum(["carry_on", "revise_plan"]),
    reason: z.string().max(4000).optional(),
  })
  .strict();
export type EscalationAnswer = z.infer<typeof EscalationAnswer>;

const SYSTEM = `You are an independent reviewer of one step of a coding agent's plan. You did not do the work and
you have no stake in it. Read the step, what it expected, and the tool calls it took. Decide one thing: should the
agent carry on with its plan as written, or revise the plan for the steps still ahead? Call submit_decision
exactly once.`;

const WHY: Record<EscalationTrigger, string> = {
  span_outlier:
    "The step took far more tool calls than the plan's other steps: was it simply harder, or should the decomposition change for the steps ahead?",
  unverified_claim:
    "The step's words claim something checkable, but nothing in its tool calls looks like a check: can the plan carry on as if the claim held?",
};

/** The reviewer's single message: the step's words, its expect/check, its span's calls and the plan's mean. */
export function escalationMessage(i: EscalationInput, trigger: EscalationTrigger): string {
  const calls = i.spanCalls.length
    ? i.spanCalls
        .map(
          (c, n) =>
            `${n + 1}. ${c.name} ${JSON.stringify(c.subject)} → ${c.exit_code === null ? "no exit code" : `exit ${c.exit_code}`}`,
        )
        .join("\n")
    : "(none)";
  return [
    `# Step\n${i.step}`,
    `# Expect\n${i.expect ?? "(none)"}`,
    `# Check\n${i.check ?? "(none)"}`,
    `# Tool calls of the step (${i.calls})\n${calls}`,
    `# The plan's mean calls per step before it\n${i.meanCalls === null ? "(none)" : i.meanCalls.toFixed(1)}`,
    `# Question\n${WHY[trigger]}`,
  ].join("\n\n");
}

function answerOf(r: Extract<ModelResponse, { ok: true }>): unknown {
  const call = r.toolCalls.find((c) => c.name === "submit_decision");
  return call ? call.args : undefined;
}

/**
 * One quarantined call: a fresh conversation, a zod-validated `submit_decision`. It never throws; a
 * failure, a timeout or any other answer is `inconclusive`. The reason is discarded here: the reviewer's
 * free text never re-enters the builder's conversation.
 */
export async function escalateStep(
  model: ModelAdapter,
  input: EscalationInput,
  trigger: EscalationTrigger,
  timeoutMs = 120_000,
  signal?: AbortSignal,
): Promise<EscalationDecision> {
  const response = await generateWithin(
    model,
    {
      system: SYSTEM,
      messages: [{ role: "user", content: escalationMessage(input, trigger), origin: "operator" }],
      tools: [
        {
          name: "submit_decision",
          description: "Submit the decision: carry_on or revise_plan.",
          inputSchema: EscalationAnswer,
        },
      ],
    },
    timeoutMs,
    signal,
  );
  if (response === "timeout" || !response.ok) return "inconclusive";
  const parsed = EscalationAnswer.safeParse(answerOf(response));
  return parsed.success ? parsed.data.decision : "inconclusive";
}
