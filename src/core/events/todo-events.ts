import { z } from "zod";
import { declareEvent, type EventArea } from "../kernel/event-area.js";
import { attempt } from "../kernel/event-parts.js";

const step = z.string().max(2000);
const command = z.string().max(4000);

/** Plan steps of the built-in agent's `todo` tool (see src/agent/todo/) and their appraisal. */
export const todoEvents = {
  todo_written: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      call_id: z.string(),
      items: z
        .array(
          z.object({
            content: step,
            status: z.enum(["pending", "in_progress", "completed"]),
            expect: z.string().max(2000).optional(),
            check: command.nullable(),
            expect_calls: z.number().int().nonnegative().optional(),
            check_frozen: z.boolean(),
          }),
        )
        .max(100),
      changes: z.array(
        z.object({
          step,
          kind: z.enum(["check_kept", "check_restored"]),
          proposed: command.nullable(),
          kept: command,
        }),
      ),
      completed: z.array(step),
      reopened: z.array(step),
    }),
  ),
  step_check_ran: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      call_id: z.string(),
      step,
      command,
      status: z.enum(["passed", "failed", "refused", "unavailable", "skipped"]),
      exit_code: z.number().int().nullable(),
      detail: z.string().max(2000),
      duration_ms: z.number().nonnegative(),
    }),
  ),
  step_appraised: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      call_id: z.string(),
      step,
      finding: z
        .enum(["landed", "null_step", "ended_on_failure", "ended_on_refusal", "check_failed"])
        .nullable(),
      measured: z.boolean(),
      calls: z.number().int().nonnegative(),
      check: z
        .object({
          command,
          exit_code: z.number().int().nullable(),
          verified: z.boolean(),
        })
        .nullable(),
      rendered: z.string().max(4000),
    }),
  ),
  step_escalated: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      call_id: z.string(),
      step,
      trigger: z.enum(["span_outlier", "unverified_claim"]),
      decision: z.enum(["carry_on", "revise_plan", "inconclusive"]),
      escalations_used: z.number().int().nonnegative(),
    }),
  ),
} as const satisfies EventArea;
