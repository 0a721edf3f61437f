import { z } from "zod";
import { LIMITS } from "./bounded.js";

/**
 * What loopgate did to make a subprocess gate's exit code believable: `auto` (a canary of its own in the
 * runner's idiom and a per-test count), `off` (the task turned it off), `none` (the runner is not one
 * loopgate knows, or this run could not be instrumented: `note` says why).
 */
export const GateTamper = z.object({
  check: z.enum(["auto", "off", "none"]),
  runner: z.string().nullable(),
  /** Where the per-test results came from. */
  channel: z.enum(["reporter", "summary"]).nullable(),
  canary: z.object({ auto: z.boolean(), declared: z.boolean() }),
  tests: z
    .object({ passed: z.number().int(), failed: z.number().int(), skipped: z.number().int() })
    .nullable(),
  floor: z.object({
    min: z.number().int().positive(),
    source: z.enum(["declared", "task_check", "default"]),
  }),
  note: z.string().max(LIMITS.note).nullable(),
});
export type GateTamper = z.infer<typeof GateTamper>;
