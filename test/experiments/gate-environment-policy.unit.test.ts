import { describe, expect, it } from "vitest";
import type { ChangePlan } from "../../src/core/observation/gate-change-plan.js";
import type { Observation } from "../../src/core/observation/observation.js";
import { asBuiltGateEnvironment } from "../../src/experiments/as-built-policy.js";
import {
  type GateEnvironmentInput,
  pristineGateEnvironment,
} from "../../src/runner/run/context/gate-environment-policy.js";

const pristine: Observation = { id: "p", entries: [] };
const after: Observation = { id: "a", entries: [] };
const plan: ChangePlan = { carry: [], drop: ["test/a.test.js"], findings: [] };
const input: GateEnvironmentInput = {
  pristineDir: "/run/pristine",
  pristine,
  workspaceDir: "/run/workspace",
  after,
  plan,
  heldoutDir: "/task/heldout",
  canaryDir: "/task/canary",
  padding: { files: [{ path: "c.test.js", content: "//  \n" }], modesFrom: "/task/canary" },
  destDir: "/run/gate-env/1-0-unit",
  link: true,
  layered: false,
};

describe("gate-environment policies", () => {
  it("loopgate's policy builds from pristine + the plan + held-out, with the canary's padding, linked", () => {
    expect(pristineGateEnvironment).toMatchObject({
      name: "pristine",
      runsCanary: true,
      mayLink: true,
      exitCodeOnly: false,
    });
    expect(pristineGateEnvironment.spec(input)).toEqual({
      pristineDir: "/run/pristine",
      pristine,
      workspaceDir: "/run/workspace",
      workspace: after,
      plan,
      heldoutDir: "/task/heldout",
      canaryDir: "/task/canary",
      padding: [{ path: "c.test.js", content: "//  \n" }],
      paddingModesFrom: "/task/canary",
      destDir: "/run/gate-env/1-0-unit",
      mode: "link",
    });
    expect(pristineGateEnvironment.spec({ ...input, link: false }).mode).toBe("copy");
    // Over an overlay run's snapshot, writable or not: an overlay of its own.
    expect(pristineGateEnvironment.spec({ ...input, layered: true }).mode).toBe("overlay");
    expect(pristineGateEnvironment.spec({ ...input, link: false, layered: true }).mode).toBe("overlay");
  });

  it("the as-built baseline takes the builder's tree as it is: nothing restored or dropped, no canary, exit code only", () => {
    expect(asBuiltGateEnvironment).toMatchObject({
      name: "as-built",
      runsCanary: false,
      mayLink: false,
      exitCodeOnly: true,
    });
    expect(asBuiltGateEnvironment.spec({ ...input, layered: true }).mode).toBe("copy");
    expect(asBuiltGateEnvironment.spec(input)).toEqual({
      pristineDir: "/run/workspace",
      pristine: after,
      workspaceDir: "/run/workspace",
      workspace: after,
      plan: { carry: [], drop: [], findings: [] },
      heldoutDir: "/task/heldout",
      canaryDir: "/task/canary",
      destDir: "/run/gate-env/1-0-unit",
      mode: "copy",
    });
  });
});
