import { cpSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChangePlan, Observation } from "../core/observation.js";
import type { Gate, GateResult } from "../gates/gate.js";
import { buildGateEnvironment } from "../workspace/gate-environment.js";
import { oracleTreeOf } from "./oracle-tree.js";
import type { RunContext } from "./run-context.js";

/**
 * Runs one gate in a fresh environment built for this run only. A gate with a `canary` is run a second
 * time with the canary overlay (held-out tests that must FAIL): if the canary passes, the test framework
 * in that environment no longer reports failures — the builder's code patched it — and the gate is not passed.
 */
export async function runGateFresh(
  ctx: RunContext,
  gate: Gate,
  n: number,
  name: string,
  state: { pristine: Observation; after: Observation; plan: ChangePlan },
): Promise<GateResult> {
  const first = await runIn(ctx, gate, n, name, state, gate.heldout);
  // The as-built baselines of the forgery benchmark model other harnesses, which have no canary.
  if (!first.passed || !gate.canary || ctx.gateEnvironment === "as-built") return first;
  const merged = await mkdtemp(join(tmpdir(), "loopgate-canary-"));
  try {
    // Both overlays are the task owner's material; merging them into one overlay keeps the safe copy path.
    if (gate.heldout) cpSync(gate.heldout, merged, { recursive: true });
    cpSync(gate.canary, merged, { recursive: true, force: true });
    const canary = await runIn(ctx, gate, n, `${name}-canary`, state, merged);
    if (canary.error === "spawn_failed" || canary.infrastructure) return canary;
    if (canary.timed_out)
      return {
        ...first,
        passed: false,
        error: "timeout",
        summary: "its canary run timed out, so the gate cannot vouch for its own tests",
      };
    if (canary.passed)
      return {
        ...first,
        passed: false,
        error: "tampered",
        summary:
          "its canary (a held-out test that must fail) passed: the test framework does not report failures here",
        log_excerpt: `${first.log_excerpt}\n[loopgate] canary run exited 0; expected a failure\n${canary.log_excerpt.slice(-2000)}`,
      };
    return { ...first, duration_ms: first.duration_ms + canary.duration_ms };
  } finally {
    await rm(merged, { recursive: true, force: true });
  }
}

async function runIn(
  ctx: RunContext,
  gate: Gate,
  n: number,
  name: string,
  state: { pristine: Observation; after: Observation; plan: ChangePlan },
  overlay: string | null,
): Promise<GateResult> {
  const asBuilt = ctx.gateEnvironment === "as-built";
  const linked = ctx.sandbox === "bubblewrap" && !gate.writable && !asBuilt;
  const envDir = join(ctx.runDir, "gate-env", name);
  try {
    await rm(envDir, { recursive: true, force: true });
    await mkdir(join(ctx.runDir, "gate-env"), { recursive: true });
    await buildGateEnvironment(
      asBuilt
        ? {
            // Baseline for the forgery benchmark only: the builder's tree as it is, plus the overlay.
            pristineDir: ctx.workspace,
            pristine: state.after,
            workspaceDir: ctx.workspace,
            workspace: state.after,
            plan: { carry: [], drop: [], findings: [] },
            ...(overlay ? { heldoutDir: overlay } : {}),
            destDir: envDir,
            mode: "copy",
          }
        : {
            pristineDir: ctx.pristineDir,
            pristine: state.pristine,
            workspaceDir: ctx.workspace,
            workspace: state.after,
            plan: state.plan,
            ...(overlay ? { heldoutDir: overlay } : {}),
            destDir: envDir,
            mode: linked ? "link" : "copy",
          },
    );
    return await gate.run({
      gateEnv: envDir,
      runId: ctx.journal.runId,
      attempt: n,
      taskId: ctx.loaded.task.id,
      sandbox: ctx.sandbox,
      readOnly: linked,
      oracleTree: oracleTreeOf(ctx), // differential gates only; built on first use
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  } finally {
    await rm(envDir, { recursive: true, force: true });
  }
}
