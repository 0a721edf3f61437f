import { z } from "zod";
import { declareEvent, type EventArea } from "../kernel/event-area.js";
import { attempt } from "../kernel/event-parts.js";

/** The independent judge's verdict on an attempt (see src/judge/). */
export const judgeEvents = {
  judge_finished: declareEvent(["judge"], () =>
    z.object({
      attempt,
      verdict: z.enum(["approve", "reject", "inconclusive"]),
      rules_applied: z.array(z.string()),
      violations: z.array(z.object({ rule: z.string(), evidence: z.string().max(2000) })),
      reason: z.string().max(2000),
      duration_ms: z.number().nonnegative(),
    }),
  ),
} as const satisfies EventArea;
