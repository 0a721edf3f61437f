// Runs the six dimensions one after another (some set process-wide variables for a moment) and
// derives the verdict. A dimension that throws or overruns is ERROR; it never passes.
import type { SelftestContext } from "./check.js";
import { contractsDimension } from "./contracts.js";
import { costDimension } from "./cost.js";
import { documentationDimension } from "./documentation.js";
import { endToEndDimension } from "./end-to-end.js";
import { liveDimension } from "./live.js";
import { orchestratorDimension } from "./orchestrator.js";
import {
  DIMENSIONS,
  type DimensionId,
  type DimensionResult,
  dimensionError,
  summarize,
  type VerdictSummary,
} from "./verdict.js";

/** Each dimension's measurement. */
export const DIMENSION_RUNNERS: Record<DimensionId, (ctx: SelftestContext) => Promise<DimensionResult>> = {
  contracts: contractsDimension,
  orchestrator: orchestratorDimension,
  end_to_end: endToEndDimension,
  cost: costDimension,
  live: liveDimension,
  documentation: documentationDimension,
};

/** The longest one dimension may take before it is ERROR. */
export const DIMENSION_TIMEOUT_MS = 50_000;

/** The whole self-test report (`loopgate selftest --json`). */
export interface SelftestReport extends VerdictSummary {
  root: string;
  readme: string;
  duration_ms: number;
}

/** Progress as each dimension starts and ends. */
export interface SelftestProgress {
  started?(id: DimensionId, title: string): void;
  finished?(result: DimensionResult): void;
}

async function measure(id: DimensionId, ctx: SelftestContext, timeoutMs: number): Promise<DimensionResult> {
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([DIMENSION_RUNNERS[id](ctx), overrun]);
  } catch (e) {
    return dimensionError(id, e);
  } finally {
    clearTimeout(timer);
  }
}

/** Measures every dimension in order and derives the verdict. */
export async function runSelftest(
  ctx: SelftestContext,
  progress: SelftestProgress = {},
  timeoutMs = DIMENSION_TIMEOUT_MS,
): Promise<SelftestReport> {
  const t0 = performance.now();
  const results: DimensionResult[] = [];
  for (const d of DIMENSIONS) {
    progress.started?.(d.id, d.title);
    const t = performance.now();
    const r = await measure(d.id, ctx, timeoutMs);
    r.duration_ms = Math.round(performance.now() - t);
    progress.finished?.(r);
    results.push(r);
  }
  const summary = summarize(results);
  return { ...summary, root: ctx.root, readme: ctx.readme, duration_ms: Math.round(performance.now() - t0) };
}
