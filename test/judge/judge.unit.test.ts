import { describe, expect, it } from "vitest";
import type { ModelAdapter, ModelRequest, ModelResponse } from "../../src/agent/models/model.js";
import { judgeRequiredFix, runJudge } from "../../src/judge/judge.js";

const rules = [
  { id: "api", text: "Keep the public API.", private: false },
  { id: "secret-rule", text: "SECRET RULE TEXT", private: true },
];
const materials = {
  prompt: "Fix slugify.",
  diff: "+export function slugify(s) { return s }",
  gateLogs: [{ id: "unit", passed: true, log: "ok 1 - slug" }],
  finalMessage: "Done, it should work.",
  rules,
};
function fake(response: ModelResponse): ModelAdapter & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    id: "fake:judge",
    requests,
    generate: async (r) => {
      requests.push(r);
      return response;
    },
  };
}
const ok = (text: string, args?: unknown): ModelResponse => ({
  ok: true,
  text,
  toolCalls: args === undefined ? [] : [{ id: "v", name: "submit_verdict", args }],
  usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
  finishReason: "stop",
});

describe("runJudge", () => {
  it("sends one fresh message with the task, rules, diff, gate logs and the final message as a claim", async () => {
    const m = fake(ok("", { verdict: "approve", rules_applied: ["api"], violations: [] }));
    const v = await runJudge(m, materials, 5000);
    expect(v.verdict).toBe("approve");
    expect(m.requests).toHaveLength(1);
    const msgs = m.requests[0]?.messages ?? [];
    expect(msgs).toHaveLength(1);
    const text = msgs[0]?.role === "user" ? msgs[0].content : "";
    for (const part of [
      "Fix slugify.",
      "- api: Keep the public API.",
      "SECRET RULE TEXT",
      "+export function slugify",
      "gate unit: passed",
      "Done, it should work.",
    ])
      expect(text).toContain(part);
    expect(text).toContain("(a claim)");
  });

  it("accepts a JSON verdict given as text, and treats anything else as inconclusive", async () => {
    expect(
      (
        await runJudge(
          fake(
            ok(
              '```json\n{"verdict":"reject","rules_applied":["api"],"violations":[{"rule":"api","evidence":"x"}]}\n```',
            ),
          ),
          materials,
          5000,
        )
      ).verdict,
    ).toBe("reject");
    for (const bad of [
      ok("approve"),
      ok("", { verdict: "maybe", rules_applied: [], violations: [] }),
      ok("", { verdict: "approve", rules_applied: ["api"], violations: [{ rule: "api", evidence: "e" }] }),
    ])
      expect((await runJudge(fake(bad), materials, 5000)).verdict).toBe("inconclusive");
    const failed = await runJudge(
      fake({ ok: false, error: { kind: "rate_limit", message: "slow down", retryable: true } }),
      materials,
      5000,
    );
    expect(failed).toMatchObject({ verdict: "inconclusive", reason: expect.stringContaining("rate_limit") });
  });
});

describe("judgeRequiredFix", () => {
  it("names violated rule ids, shows public rule texts, quotes evidence only when it is in the diff", () => {
    const fix = judgeRequiredFix(
      1,
      {
        verdict: "reject",
        violations: [
          { rule: "api", evidence: "export function slugify(s)" },
          { rule: "secret-rule", evidence: "the judge thinks the author was lazy" },
        ],
      },
      rules,
      materials.diff,
    );
    expect(fix).toContain("- api: Keep the public API.");
    expect(fix).toContain("in your change: export function slugify(s)");
    expect(fix).toContain("- secret-rule");
    expect(fix).not.toContain("SECRET RULE TEXT");
    expect(fix).not.toContain("lazy");
  });
});
