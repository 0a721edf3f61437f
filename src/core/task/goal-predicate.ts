import { z } from "zod";

// The values a goal predicate is made of, in a module of their own: the agent's events declare goal
// predicates too, and every command reads those events, while only some load a task file.

/** A gate's id. */
export const gateId = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lower-case letters, digits, - and _ only");
/** A path relative to the workspace. */
export const relPath = z.string().min(1);

/** One trusted-evidence predicate of a goal. */
export const GoalPredicate = z.union([
  z.object({ command_succeeded: z.string().min(1).max(500) }).strict(),
  z.object({ gate_passed: gateId }).strict(),
  z.object({ file_exists: relPath }).strict(),
]);
export type GoalPredicate = z.infer<typeof GoalPredicate>;
