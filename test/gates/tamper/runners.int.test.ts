import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { SubprocessGateSpec } from "../../../src/core/task/task.js";
import { subprocessGate } from "../../../src/gates/subprocess-gate.js";
import { resolveProgram } from "../../../src/sandbox/environment.js";
import { RUNNER_FIXTURES } from "./runner-fixtures.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "lg-tamper-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function tree(files: Record<string, string>, setup?: (dir: string) => void): Promise<string> {
  const dir = await mkdtemp(join(root, "env-"));
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  setup?.(dir);
  return dir;
}

function gate(run: string[], over: Partial<SubprocessGateSpec> = {}) {
  return subprocessGate(
    {
      id: "tests",
      run,
      timeout: "120s",
      feedback: "summary",
      env: {},
      writable: false,
      tamper_check: "auto",
      ...over,
    },
    null,
  );
}

async function runGate(
  files: Record<string, string>,
  run: string[],
  over: Partial<SubprocessGateSpec> = {},
  setup?: (dir: string) => void,
) {
  const env = await tree(files, setup);
  return gate(run, over).run({
    gateEnv: env,
    runId: "run-1",
    attempt: 1,
    taskId: "t",
    sandbox: "bubblewrap",
    readOnly: true,
  });
}

for (const f of RUNNER_FIXTURES) {
  const installed = resolveProgram(f.program, "/") !== null;
  describe.skipIf(!installed)(`${f.runner} (no canary in the task file)`, () => {
    if (!installed) console.log(`${f.runner}: skipped, ${f.program} is not installed under /usr`);

    test("an honest project passes, with loopgate's own count of its tests", async () => {
      const r = await runGate(f.honest, f.argv, {}, f.setup);
      expect(r.log_excerpt && r.passed, r.summary + r.log_excerpt).toBe(true);
      expect(r.tamper?.check).toBe("auto");
      expect(r.tamper?.runner).toBe(f.runner);
      expect(r.tamper?.tests?.passed).toBe(f.tests);
      expect(r.tamper?.tests?.failed).toBe(0);
    });

    test("code under test that exits 0 when loaded is refused, though the runner exits 0", async () => {
      const r = await runGate(f.exitOnImport, f.argv, {}, f.setup);
      expect(r.passed).toBe(false);
      // Either loopgate's checks refused it, or the runner itself turned the exit into a failed file (vitest).
      if (r.error === null) expect(r.tamper?.tests?.failed).toBeGreaterThan(0);
      else expect(["tampered", "too_few_tests", "unreadable"]).toContain(r.error);
    });

    if (f.patchFramework) {
      const patched = f.patchFramework;
      test("code under test that turns the assertions into no-ops is refused as tampered", async () => {
        const r = await runGate(patched, f.argv, {}, f.setup);
        expect(r.passed).toBe(false);
        expect(r.error).toBe("tampered");
      });
    }

    test("with tamper_check: off the exit code alone decides, and the envelope says so", async () => {
      const r = await runGate(f.exitOnImport, f.argv, { tamper_check: "off" }, f.setup);
      expect(r.tamper?.check).toBe("off");
      expect(r.tamper?.tests).toBeNull();
    });

    test("a floor above what the run counted is not passed (too_few_tests)", async () => {
      const r = await runGate(f.honest, f.argv, { min_tests: f.tests + 1 }, f.setup);
      expect(r.passed).toBe(false);
      expect(r.error).toBe("too_few_tests");
      expect(r.summary).toContain(String(f.tests + 1));
    });
  });
}
