import { isAbsolute, resolve } from "node:path";
import type { Builder } from "../builders/builder.js";
import { createModel } from "./models/provider.js";

/** Makes file-based model specs absolute, so a resumed run finds the same file from any folder. */
export function normalizeModelSpec(spec: string): string {
  const m = /^(scripted|replay):(.+)$/.exec(spec);
  if (!m?.[1] || !m[2] || isAbsolute(m[2])) return spec;
  return `${m[1]}:${resolve(m[2])}`;
}

/** loopgate's built-in agent as a builder: the runner drives its turn loop event by event. */
export function agentBuilder(
  spec: string,
  options: {
    record?: string;
    baseUrl?: string;
    maxTurns?: number;
    maxCostUsd?: number;
    position?: number;
    stepChecks?: boolean;
    /** A model spec (same forms as the builder's) for step escalation; absent, escalation is off. */
    stepEscalation?: string;
  } = {},
): Builder {
  const normalized = normalizeModelSpec(spec);
  const model = createModel(normalized, {
    ...(options.record !== undefined ? { record: resolve(options.record) } : {}),
    ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
    ...(options.position !== undefined ? { position: options.position } : {}),
  });
  return {
    descriptor: {
      kind: "agent",
      command: normalized,
      ...(options.maxTurns !== undefined ? { max_turns: options.maxTurns } : {}),
      ...(options.maxCostUsd !== undefined ? { max_cost_usd: options.maxCostUsd } : {}),
      ...(options.stepChecks === false ? { step_checks: false } : {}),
      ...(options.stepEscalation !== undefined
        ? { step_escalation: normalizeModelSpec(options.stepEscalation) }
        : {}),
    },
    run: () => Promise.reject(new Error("the built-in agent is driven by the runner, not run as a command")),
    agent: {
      model,
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
      ...(options.maxCostUsd !== undefined ? { maxCostUsd: options.maxCostUsd } : {}),
      ...(options.stepChecks === false ? { stepChecks: false } : {}),
      ...(options.stepEscalation !== undefined
        ? { stepEscalation: createModel(normalizeModelSpec(options.stepEscalation)) }
        : {}),
    },
  };
}
