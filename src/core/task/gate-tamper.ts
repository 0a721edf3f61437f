import { z } from "zod";
import { LIMITS } from "../kernel/bounded.js";

/** The most test identities one gate run records for `loopgate task check` (a suite larger is refused, not cut). */
export const MAX_RECORDED_TESTS = 20_000;

const testId = z.string().max(2000);

/** The most canary test names one gate run records. */
export const MAX_CANARY_NAMES = 20;

/** A twin the oracle failed: which test it copies, which literal it changed, to what. */
export const TwinRecord = z.object({
  test: testId,
  site: z.string().max(64),
  replacement: z.string().max(2000),
});
export type TwinRecord = z.infer<typeof TwinRecord>;

/**
 * What loopgate did to make a subprocess gate's exit code believable: `auto` (identities, mutated twins
 * or a canary of its own, read from the runner's per-test results), `off` (the task turned it off),
 * `none` (the runner is not one loopgate knows, or this run could not be instrumented: `note` says why).
 */
export const GateTamper = z.object({
  check: z.enum(["auto", "off", "none"]),
  runner: z.string().nullable(),
  /** Where the per-test results came from. */
  channel: z.enum(["reporter", "summary"]).nullable(),
  /**
   * `auto`: loopgate planted a canary of its own in this run (so the runner exits non-zero even when every
   * real test passed); `declared`: the gate has a declared `canary:` folder, run separately.
   */
  canary: z.object({
    auto: z.boolean(),
    declared: z.boolean(),
    /** The names of loopgate's own canary tests in this run (fresh each run), to tell their lines in the log. */
    tests: z.array(z.string().max(200)).max(MAX_CANARY_NAMES).optional(),
    /** Whether every planted canary test reported a failure where it had to and the runner exited non-zero. */
    failed_as_expected: z.boolean().optional(),
  }),
  tests: z
    .object({ passed: z.number().int(), failed: z.number().int(), skipped: z.number().int() })
    .nullable(),
  floor: z.object({
    min: z.number().int().positive(),
    source: z.enum(["declared", "task_check", "default"]),
  }),
  note: z.string().max(LIMITS.note).nullable(),
  /**
   * The tests this gate had to pass by identity (the task's lock), how many did, and the first that did
   * not; `recording` in `loopgate task check`, which records them.
   */
  identity: z
    .object({
      source: z.enum(["lock", "recording"]),
      required: z.number().int().nonnegative(),
      passed: z.number().int().nonnegative(),
      not_passed: z.array(testId).max(10),
    })
    .nullable()
    .optional(),
  /** Mutated twins written into this run, and how many failed as they must. */
  twins: z
    .object({ planted: z.number().int().nonnegative(), failed: z.number().int().nonnegative() })
    .nullable()
    .optional(),
  /** `loopgate task check` only: every test that passed and every twin that failed, for the lock. */
  observed: z
    .object({
      passed: z.array(testId).max(MAX_RECORDED_TESTS),
      twins_failed: z.array(TwinRecord).max(MAX_RECORDED_TESTS),
      untwinned: z.array(z.string().max(LIMITS.note)).max(200),
    })
    .optional(),
});
export type GateTamper = z.infer<typeof GateTamper>;
