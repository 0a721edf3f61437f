import { z } from "zod";
import type { ModelAdapter, ModelResponse } from "../core/agent/model-boundary.js";
import type { EventData } from "../core/events/loopgate-event.js";
import type { ResolvedRule } from "../core/task/judge-spec.js";
import { generateWithin } from "./generate-within.js";

/** The only shape of verdict the judge may give; anything else is inconclusive. */
export const JudgeVerdict = z
  .object({
    verdict: z.enum(["approve", "reject"]),
    rules_applied: z.array(z.string()),
    violations: z.array(z.object({ rule: z.string(), evidence: z.string().max(2000) }).strict()),
  })
  .strict();
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

/** What the judge reads: none of the builder's conversation, only the task, the work and the evidence. */
export interface JudgeMaterials {
  prompt: string;
  diff: string;
  gateLogs: { id: string; passed: boolean; log: string }[];
  finalMessage: string;
  rules: readonly ResolvedRule[];
}

const SYSTEM = `You are an independent reviewer. You did not write this change and you have no stake in it.
Judge the change against each rule, using the diff and the gate logs as evidence. The builder's final
message is a claim, not evidence. Call submit_verdict exactly once: approve only if no rule is violated;
otherwise reject and list each violated rule id with the evidence (quote the diff).`;

/** Renders the materials as the judge's single user message. */
export function judgeMessage(m: JudgeMaterials): string {
  const rules = m.rules.map((r) => `- ${r.id}: ${r.text}`).join("\n");
  const logs = m.gateLogs
    .map((g) => `## gate ${g.id}: ${g.passed ? "passed" : "failed"}\n${g.log.slice(-3000)}`)
    .join("\n\n");
  return [
    `# Task\n${m.prompt}`,
    `# Rules\n${rules}`,
    `# Diff (pristine → deliverables)\n${m.diff || "(no changes)"}`,
    `# Gate logs\n${logs}`,
    `# The builder's final message (a claim)\n${m.finalMessage || "(none)"}`,
  ].join("\n\n");
}

/** Checks a verdict against the rules: unknown rule ids, or a rejection without violations, are not a verdict. */
function coherent(v: JudgeVerdict, rules: readonly ResolvedRule[]): string | null {
  const ids = new Set(rules.map((r) => r.id));
  const unknown = [...v.rules_applied, ...v.violations.map((x) => x.rule)].filter((id) => !ids.has(id));
  if (unknown.length) return `unknown rule ids ${[...new Set(unknown)].join(", ")}`;
  if (v.verdict === "reject" && v.violations.length === 0) return "a rejection that names no violated rule";
  if (v.verdict === "approve" && v.violations.length > 0) return "an approval that lists violations";
  return null;
}

function parseVerdict(r: Extract<ModelResponse, { ok: true }>): unknown {
  const call = r.toolCalls.find((c) => c.name === "submit_verdict");
  if (call) return call.args;
  const text = r.text.trim().replace(/^```(?:json)?\s*|\s*```$/g, "");
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Runs the judge once. It never throws and never approves by default: an unparseable, incoherent,
 * timed-out or failed answer is `inconclusive`, which does not pass.
 */
export async function runJudge(
  model: ModelAdapter,
  materials: JudgeMaterials,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Omit<EventData<"judge_finished">, "attempt">> {
  const started = performance.now();
  const done = (v: Omit<EventData<"judge_finished">, "attempt" | "duration_ms">) => ({
    ...v,
    duration_ms: Math.round(performance.now() - started),
  });
  const inconclusive = (reason: string) =>
    done({ verdict: "inconclusive", rules_applied: [], violations: [], reason });
  try {
    const response = await generateWithin(
      model,
      {
        system: SYSTEM,
        messages: [{ role: "user", content: judgeMessage(materials), origin: "operator" }],
        tools: [
          { name: "submit_verdict", description: "Submit the review verdict.", inputSchema: JudgeVerdict },
        ],
      },
      timeoutMs,
      signal,
    );
    if (response === "timeout") return inconclusive(`the judge did not answer within ${timeoutMs} ms`);
    if (!response.ok)
      return inconclusive(`the judge's model failed: ${response.error.kind}: ${response.error.message}`);
    const parsed = JudgeVerdict.safeParse(parseVerdict(response));
    if (!parsed.success)
      return inconclusive(
        `the judge's answer is not a verdict: ${parsed.error.issues[0]?.message ?? "unparseable"}`,
      );
    const problem = coherent(parsed.data, materials.rules);
    if (problem) return inconclusive(`the judge's verdict is incoherent: ${problem}`);
    const v = parsed.data;
    const reason =
      v.verdict === "approve"
        ? `approved under ${v.rules_applied.length} rules`
        : `rejected: ${[...new Set(v.violations.map((x) => x.rule))].join(", ")}`;
    return done({ verdict: v.verdict, rules_applied: v.rules_applied, violations: v.violations, reason });
  } catch (e) {
    return inconclusive(`the judge failed: ${String(e)}`);
  }
}

/**
 * The required fix after a rejection: the violated rule ids, the texts of public rules, and evidence only
 * where it quotes the builder's own diff verbatim. The judge's free text never reaches the builder.
 */
export function judgeRequiredFix(
  attempt: number,
  verdict: Pick<EventData<"judge_finished">, "verdict" | "violations">,
  rules: readonly ResolvedRule[],
  diff: string,
): string {
  if (verdict.verdict === "inconclusive")
    return `Attempt ${attempt} passed its checks, but the independent review could not reach a verdict, so it is not accepted. Make the change again, keeping it minimal and within the task.`;
  const lines = [`Attempt ${attempt} passed its checks, but the independent review found rule violations:`];
  for (const id of [...new Set(verdict.violations.map((v) => v.rule))]) {
    const rule = rules.find((r) => r.id === id);
    lines.push(rule && !rule.private ? `- ${id}: ${rule.text}` : `- ${id}`);
    for (const v of verdict.violations.filter((x) => x.rule === id)) {
      const quote = v.evidence.trim();
      if (quote.length >= 8 && diff.includes(quote)) lines.push(`  in your change: ${quote.slice(0, 300)}`);
    }
  }
  lines.push("Fix the work so that it keeps every rule.");
  return lines.join("\n");
}
