import type { ChangePlan } from "../../../core/observation/gate-change-plan.js";
import type { Observation } from "../../../core/observation/observation.js";
import type { GateEnvironmentSpec } from "../../../workspace/gate-environment.js";

/** What one gate environment is built from; a policy turns it into the builder's spec. */
export interface GateEnvironmentInput {
  pristineDir: string;
  pristine: Observation;
  workspaceDir: string;
  /** The observation after the builder: what the gates check. */
  after: Observation;
  plan: ChangePlan;
  heldoutDir?: string;
  canaryDir?: string;
  /** Inert stand-ins where a canary's files go (the real run of a gate with a canary). */
  padding?: { files: readonly { path: string; content: string }[]; modesFrom: string };
  destDir: string;
  /** Unchanged pristine files may be hardlinked (the gate sandbox mounts the environment read-only). */
  link: boolean;
  /** The pristine tree may be the lower layer of an overlay (the run's workspace is one over it). */
  layered: boolean;
}

/**
 * How a run's gate environments are built. loopgate's own policy (`pristineGateEnvironment`, the only
 * one `loopgate run` uses) builds them from pristine + deliverables − protected + held-out and runs
 * declared canaries. Other policies are passed in by whoever starts the run (the forgery benchmark's
 * baselines, see experiments/); a policy other than pristine is recorded in run_started.gate_environment.
 */
export interface GateEnvironmentPolicy {
  readonly name: "pristine" | "as-built";
  /** Whether a gate's declared canary run (a held-out test that must fail) is made. */
  readonly runsCanary: boolean;
  /** Whether the environment may be hardlinked and mounted read-only. */
  readonly mayLink: boolean;
  /** Whether gates decide by exit code alone (no test-report tamper checks). */
  readonly exitCodeOnly: boolean;
  spec(input: GateEnvironmentInput): GateEnvironmentSpec;
}

/** loopgate's policy: pristine + the deliverables − protected paths + the held-out overlay. */
export const pristineGateEnvironment: GateEnvironmentPolicy = {
  name: "pristine",
  runsCanary: true,
  mayLink: true,
  exitCodeOnly: false,
  spec: (i) => ({
    pristineDir: i.pristineDir,
    pristine: i.pristine,
    workspaceDir: i.workspaceDir,
    workspace: i.after,
    plan: i.plan,
    ...(i.heldoutDir ? { heldoutDir: i.heldoutDir } : {}),
    ...(i.canaryDir ? { canaryDir: i.canaryDir } : {}),
    ...(i.padding ? { padding: i.padding.files, paddingModesFrom: i.padding.modesFrom } : {}),
    destDir: i.destDir,
    mode: i.layered ? "overlay" : i.link ? "link" : "copy",
  }),
};
