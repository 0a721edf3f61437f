import { z } from "zod";
import { DurationField } from "../kernel/duration.js";

// The task file's `judge:` section: the rules an independent judge holds an attempt to, and its limits.

/** `judge.timeout` when the task gives none. */
export const DEFAULT_JUDGE_TIMEOUT = "120s";

/** A judge rule: a string, or an id with its text; a private rule is shown to the judge, never to the builder. */
const JudgeRule = z.union([
  z.string().min(1).max(2000),
  z
    .object({
      id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lower-case letters, digits, - and _ only"),
      text: z.string().min(1).max(2000),
      private: z.boolean().default(false),
    })
    .strict(),
]);

/** The independent judge: a fresh model session that can only veto an attempt whose gates all passed. */
export const JudgeSchema = z
  .object({
    rules: z.array(JudgeRule).min(1, "a judge needs at least one rule to judge by"),
    model: z.string().min(1).optional(),
    timeout: DurationField.default(DEFAULT_JUDGE_TIMEOUT),
  })
  .strict();
/** A task's judge section as parsed. */
export type JudgeSpec = z.infer<typeof JudgeSchema>;

/** A judge rule with its id resolved: string rules are `rule-1`, `rule-2`, … in declaration order. */
export interface ResolvedRule {
  id: string;
  text: string;
  private: boolean;
}

/** The task's judge rules with ids. */
export function judgeRules(task: { judge?: JudgeSpec | undefined }): ResolvedRule[] {
  return (task.judge?.rules ?? []).map((r, i) =>
    typeof r === "string"
      ? { id: `rule-${i + 1}`, text: r, private: false }
      : { id: r.id, text: r.text, private: r.private },
  );
}
