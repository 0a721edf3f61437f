// Dimension 5, live operation: when a provider is configured, one tiny request must come back with
// an answer. Without one this dimension is NOT_VERIFIABLE, never a pass.
import { createModel } from "../agent/models/provider.js";
import { check, must, type SelftestContext } from "./check.js";
import { type DimensionResult, dimensionFromChecks } from "./verdict.js";

/** How long the one live request may take. */
export const LIVE_TIMEOUT_MS = 30_000;

/** The model the live check asks, from the environment; or why there is none. */
export function liveModelSpec(env: NodeJS.ProcessEnv): { spec: string } | { reason: string } {
  const chosen = env.LOOPGATE_SELFTEST_MODEL?.trim();
  if (chosen) {
    if (/^(scripted|replay):/.test(chosen))
      return { reason: `LOOPGATE_SELFTEST_MODEL=${chosen} is not a live provider` };
    return { spec: chosen };
  }
  if (env.ANTHROPIC_API_KEY) return { spec: "anthropic:claude-haiku-4-5" };
  if (env.OPENAI_API_KEY) return { spec: "openai:gpt-4o-mini" };
  if (env.LOOPGATE_OPENAI_COMPATIBLE_BASE_URL)
    return {
      reason:
        "LOOPGATE_OPENAI_COMPATIBLE_BASE_URL is set but no model is named: set LOOPGATE_SELFTEST_MODEL=openai-compatible:MODEL",
    };
  return {
    reason:
      "no provider configured (ANTHROPIC_API_KEY, OPENAI_API_KEY or LOOPGATE_OPENAI_COMPATIBLE_BASE_URL with LOOPGATE_SELFTEST_MODEL); no model was called",
  };
}

/** The live-operation dimension. */
export async function liveDimension(ctx: SelftestContext): Promise<DimensionResult> {
  const chosen = liveModelSpec(ctx.env);
  if ("reason" in chosen)
    return dimensionFromChecks("live", [
      { name: "a configured provider answers", ok: null, detail: chosen.reason },
    ]);
  const checks = [
    await check(`${chosen.spec} answers one tiny request`, async () => {
      const model = createModel(chosen.spec, { env: ctx.env });
      const t0 = performance.now();
      const r = await model.generate({
        system: "You are a health check. Answer with one word.",
        messages: [{ role: "user", content: "Reply with the single word: ready", origin: "operator" }],
        tools: [],
        signal: AbortSignal.timeout(LIVE_TIMEOUT_MS),
      });
      const ms = Math.round(performance.now() - t0);
      must(r.ok, r.ok ? "" : `${r.error.kind}: ${r.error.message}`);
      must(r.text.trim().length > 0, `an empty answer (finish reason ${r.finishReason})`);
      const cost = r.usage.costUsd === null ? "cost unknown" : `$${r.usage.costUsd.toFixed(6)}`;
      return `answered ${JSON.stringify(r.text.trim().slice(0, 40))} in ${ms} ms; ${r.usage.inputTokens}+${r.usage.outputTokens} tokens, ${cost}`;
    }),
  ];
  return dimensionFromChecks("live", checks);
}
