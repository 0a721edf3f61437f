// The "copy" project's setup: its files run with LOOPGATE_WORKSPACE=copy, so the copy path (what runs
// use where overlays cannot be mounted) passes the same tests the default, an overlay where one can be
// mounted, passes in the other projects. The variable is restored after each file: no project isolates
// its files (vitest.config.ts), and every process a test starts inherits it while it is set.
import { afterAll, beforeAll } from "vitest";
import { WORKSPACE_MODE_VARIABLE } from "../../src/workspace/overlay-workspace.js";

const saved = process.env[WORKSPACE_MODE_VARIABLE];
beforeAll(() => {
  process.env[WORKSPACE_MODE_VARIABLE] = "copy";
});
afterAll(() => {
  if (saved === undefined) delete process.env[WORKSPACE_MODE_VARIABLE];
  else process.env[WORKSPACE_MODE_VARIABLE] = saved;
});
