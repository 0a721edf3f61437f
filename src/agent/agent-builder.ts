import { isAbsolute, resolve } from "node:path";
import type { ModelAdapter } from "./models/model.js";
import { createModel } from "./models/provider.js";

/** Makes file-based model specs absolute, so a resumed run finds the same file from any folder. */
export function normalizeModelSpec(spec: string): string {
  const m = /^(scripted|replay):(.+)$/.exec(spec);
  if (!m?.[1] || !m[2] || isAbsolute(m[2])) return spec;
  return `${m[1]}:${resolve(m[2])}`;
}

/** The built-in agent's model and the caps the user set on the command line. */
export interface AgentSettings {
  model: ModelAdapter;
  maxTurns?: number;
  maxCostUsd?: number;
  /** False with --no-step-checks: declared plan-step checks are not executed. */
  stepChecks?: boolean;
  /** With --step-escalation: the quarantined model consulted about a step that trips a trigger. */
  stepEscalation?: ModelAdapter;
}

/** The built-in agent as run_started records it (enough to rebuild it on resume) and its settings. */
export interface AgentBuilder {
  descriptor: {
    kind: "agent";
    command: string;
    max_turns?: number;
    max_cost_usd?: number;
    step_checks?: false;
    step_escalation?: string;
  };
  agent: AgentSettings;
}

/** loopgate's built-in agent: the runner drives its turn loop event by event (it has no command to run). */
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
): AgentBuilder {
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
