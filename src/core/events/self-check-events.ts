import { z } from "zod";
import { declareEvent, type EventArea } from "../kernel/event-area.js";
import { attempt, turn } from "../kernel/event-parts.js";
import { SelfCheckPlan, SelfCheckSubmission } from "../self-check/schemas.js";

/** The built-in agent's self-check (advisory): accepted submissions and the repair gate. */
export const selfCheckEvents = {
  self_check_plan_recorded: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      call_id: z.string(),
      plan: SelfCheckPlan,
      guard_version: z.number().int().positive(),
    }),
  ),
  self_check_recorded: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      call_id: z.string(),
      check: SelfCheckSubmission,
      guard_version: z.number().int().positive(),
      observation_id: z.string(),
      evidence_findings: z.array(z.object({ code: z.string(), detail: z.string().max(2000) })).max(100),
      verified_artifacts: z.array(z.string()).max(100),
      cited_commands: z.array(z.string().max(4000)).max(50),
    }),
  ),
  repair_decided: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      turn,
      decision: z.enum(["allow", "repair", "cap_reached"]),
      semantic_status: z.enum(["complete", "incomplete"]),
      blockers: z.array(z.object({ code: z.string(), detail: z.string().max(500) })).max(200),
      repairs_used: z.number().int().nonnegative(),
      cap: z.number().int().nonnegative(),
      warnings: z.array(z.string().max(500)).max(50),
    }),
  ),
} as const satisfies EventArea;
