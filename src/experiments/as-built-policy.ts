import type { GateEnvironmentPolicy } from "../runner/run/context/gate-environment-policy.js";

/**
 * The baseline other harnesses use, for the forgery benchmark only: the builder's final tree as it
 * is plus the held-out overlay, nothing restored, no canary, exit code only. `loopgate run` never
 * offers it; experiment arms that name a baseline policy (`overlay`, `in-workspace-tests`) pass it in.
 */
export const asBuiltGateEnvironment: GateEnvironmentPolicy = {
  name: "as-built",
  runsCanary: false,
  mayLink: false,
  exitCodeOnly: true,
  spec: (i) => ({
    pristineDir: i.workspaceDir,
    pristine: i.after,
    workspaceDir: i.workspaceDir,
    workspace: i.after,
    plan: { carry: [], drop: [], findings: [] },
    ...(i.heldoutDir ? { heldoutDir: i.heldoutDir } : {}),
    ...(i.canaryDir ? { canaryDir: i.canaryDir } : {}),
    destDir: i.destDir,
    mode: "copy",
  }),
};
