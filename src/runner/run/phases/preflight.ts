import { existsSync } from "node:fs";
import type { RunContext } from "../context/run-context.js";

/**
 * What is known to be missing before the builder runs and spends anything: a mount that does not
 * exist, a builder program that is not found, a gate program that is not installed. Each is a
 * TOOL_FAILURE naming the path and the fix; null when nothing is known to be missing.
 */
export function preflight(ctx: RunContext): string | null {
  if (!ctx.workFrom) {
    for (const m of ctx.mounts)
      if (!existsSync(m))
        return ctx.userMounts.includes(m)
          ? `the builder mount ${m} does not exist; fix the --builder-mount path (or drop it) and run again`
          : `${m}, named in the builder command, does not exist any more; restore it or change the builder command`;
    const problem = ctx.builder.preflight?.(ctx.workspace);
    if (problem) return problem;
  }
  for (const g of ctx.gates) {
    const problem = g.preflight?.(ctx.sandbox);
    if (problem) return problem;
  }
  return null;
}
