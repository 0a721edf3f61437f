import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SubprocessGateSpec } from "../../src/core/task/task.js";
import type { GateContext } from "../../src/gates/gate.js";
import { subprocessGate } from "../../src/gates/subprocess-gate.js";
import type { SandboxMode } from "../../src/sandbox/bubblewrap.js";

let root: string;
let env: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "lg-gate-"));
  env = join(root, "gate-env");
  await mkdir(join(env, "bin"), { recursive: true });
  await writeFile(join(env, "data.txt"), "gate data\n");
  await writeFile(join(root, "outside-secret.txt"), "outside the gate env");
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function spec(run: string[], over: Partial<SubprocessGateSpec> = {}): SubprocessGateSpec {
  return {
    id: "unit",
    run,
    timeout: "15s",
    feedback: "summary",
    env: {},
    writable: false,
    tamper_check: "auto",
    ...over,
  };
}

function ctx(over: Partial<GateContext> = {}): GateContext {
  return {
    gateEnv: env,
    runId: "run-42",
    attempt: 3,
    taskId: "task-a",
    sandbox: "bubblewrap",
    readOnly: true,
    ...over,
  };
}

const sh = (script: string, over: Partial<SubprocessGateSpec> = {}) => spec(["/bin/sh", "-c", script], over);

describe("subprocessGate", () => {
  it("exit 0 passes", async () => {
    const r = await subprocessGate(sh("cat data.txt"), null).run(ctx());
    expect(r).toMatchObject({
      passed: true,
      exit_code: 0,
      timed_out: false,
      error: null,
      infrastructure: null,
    });
    expect(r.log_excerpt).toBe("gate data\n");
  });

  it("exit 1 does not pass, with exit_code 1 and the log excerpt", async () => {
    const r = await subprocessGate(sh("echo 'assertion failed: 2 != 3' >&2; exit 1"), null).run(ctx());
    expect(r).toMatchObject({
      passed: false,
      exit_code: 1,
      timed_out: false,
      error: null,
      infrastructure: null,
    });
    expect(r.log_excerpt).toContain("assertion failed: 2 != 3");
    expect(r.summary).toBe("exit 1");
  });

  it("a gate that sleeps past its timeout does not pass, says timeout, and returns promptly", async () => {
    const t0 = performance.now();
    const r = await subprocessGate(sh("echo started; sleep 30", { timeout: "500ms" }), null).run(ctx());
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(r).toMatchObject({ passed: false, timed_out: true, error: "timeout", infrastructure: null });
    expect(r.log_excerpt).toContain("started");
  });

  it.each<SandboxMode>(["bubblewrap", "none"])(
    "a gate killed by a signal is a crash, not a pass (%s)",
    async (mode) => {
      const r = await subprocessGate(sh("kill -SEGV $$$$"), null).run(ctx({ sandbox: mode }));
      expect(r.passed).toBe(false);
      expect(r.error).toBe("crashed");
      expect(r.summary).toContain("SIGSEGV");
    },
  );

  it("a gate killed by SIGKILL is a crash too", async () => {
    const r = await subprocessGate(sh("kill -9 $$$$"), null).run(ctx());
    expect(r).toMatchObject({ passed: false, error: "crashed" });
    expect(r.summary).toContain("SIGKILL");
  });

  it("a gate that exits with an ordinary non-zero status is not a crash", async () => {
    const r = await subprocessGate(sh("exit 2"), null).run(ctx());
    expect(r).toMatchObject({ passed: false, exit_code: 2, error: null });
  });

  it("a program that is not installed (bare name): spawn_failed, infrastructure set", async () => {
    const r = await subprocessGate(spec(["lg-no-such-test-runner", "--all"]), null).run(ctx());
    expect(r).toMatchObject({ passed: false, error: "spawn_failed", exit_code: null });
    expect(r.infrastructure).toContain("lg-no-such-test-runner");
  });

  it("a relative program missing from the gate env: spawn_failed, the work's fault (infrastructure null)", async () => {
    const r = await subprocessGate(spec(["./bin/run-tests.sh"]), null).run(ctx());
    expect(r).toMatchObject({ passed: false, error: "spawn_failed", infrastructure: null });
  });

  it("an absolute program path into the gate env that is missing is the work's fault too", async () => {
    const r = await subprocessGate(spec(["${gate_env}/bin/run-tests.sh"]), null).run(ctx());
    expect(r).toMatchObject({ passed: false, error: "spawn_failed", infrastructure: null });
  });

  it("an absolute program path outside the gate env that is missing is the machine's fault", async () => {
    const r = await subprocessGate(spec([join(root, "tools", "missing-runner")]), null).run(ctx());
    expect(r).toMatchObject({ passed: false, error: "spawn_failed" });
    expect(r.infrastructure).toContain("missing-runner");
  });

  it("a host program outside the sandbox's mounts is refused as spawn_failed (machine's fault), not run as exit 1", async () => {
    await mkdir(join(root, "tools"));
    const runner = join(root, "tools", "runner.sh");
    await writeFile(runner, "#!/bin/sh\necho ran\n");
    await chmod(runner, 0o755);
    const r = await subprocessGate(spec([runner]), null).run(ctx());
    expect(r).toMatchObject({ passed: false, error: "spawn_failed", exit_code: null });
    expect(r.infrastructure).toContain(runner);
    // Unsandboxed, the same host program is reachable and runs.
    const direct = await subprocessGate(spec([runner]), null).run(ctx({ sandbox: "none" }));
    expect(direct).toMatchObject({ passed: true, exit_code: 0 });
  });

  it("a relative program present in the gate env runs from there", async () => {
    await writeFile(join(env, "bin", "run-tests.sh"), "#!/bin/sh\necho from-gate-env\n");
    await chmod(join(env, "bin", "run-tests.sh"), 0o755);
    const r = await subprocessGate(spec(["./bin/run-tests.sh"]), null).run(ctx());
    expect(r).toMatchObject({ passed: true, exit_code: 0 });
    expect(r.log_excerpt).toBe("from-gate-env\n");
  });

  it("substitutes ${gate_env}, ${run_id}, ${attempt}, ${gate_id}, ${task_id}; $$ is a literal $", async () => {
    const gate = subprocessGate(
      spec([
        "/bin/sh",
        "-c",
        'printf "%s|" "$$@"',
        "sh",
        "${gate_env}",
        "${run_id}",
        "${attempt}",
        "${gate_id}",
        "${task_id}",
        "$${run_id}",
      ]),
      null,
    );
    const r = await gate.run(ctx());
    expect(r.log_excerpt).toBe(`${env}|run-42|3|unit|task-a|\${run_id}|`);
  });

  it("the caller's secrets are absent from the gate and its PID 1; the gate's own env and the fixed base are there", async () => {
    process.env.LG_GATE_PARENT_SECRET = "gate-secret-3e1";
    try {
      const r = await subprocessGate(
        sh("env; echo ---; tr '\\0' '\\n' < /proc/1/environ", { env: { GATE_MODE: "strict" } }),
        null,
      ).run(ctx());
      expect(r.log_excerpt).not.toContain("gate-secret-3e1");
      expect(r.log_excerpt).not.toContain("LG_GATE_PARENT_SECRET");
      for (const line of [
        "GATE_MODE=strict",
        "PYTHONDONTWRITEBYTECODE=1",
        "LOOPGATE_RUN_ID=run-42",
        "HOME=/tmp",
      ])
        expect(r.log_excerpt).toContain(line);
    } finally {
      delete process.env.LG_GATE_PARENT_SECRET;
    }
  });

  it("cannot see outside the gate env (the folder around it)", async () => {
    const r = await subprocessGate(
      sh(`cat ${root}/outside-secret.txt; test -e ${root}/outside-secret.txt`),
      null,
    ).run(ctx());
    expect(r.passed).toBe(false);
    expect(r.log_excerpt).not.toContain("outside the gate env");
  });

  it("read-only mode: a write into the gate env fails, /tmp is writable", async () => {
    const r = await subprocessGate(
      sh(
        "echo x > data.txt && echo WROTE-DATA; echo y > new.txt && echo WROTE-NEW; echo t > /tmp/t && echo TMP-OK",
      ),
      null,
    ).run(ctx({ readOnly: true }));
    expect(r.log_excerpt).toContain("TMP-OK");
    expect(r.log_excerpt).not.toContain("WROTE-DATA");
    expect(r.log_excerpt).not.toContain("WROTE-NEW");
    expect(await readFile(join(env, "data.txt"), "utf8")).toBe("gate data\n");
    expect(existsSync(join(env, "new.txt"))).toBe(false);
  });

  it("writable mode: a write into the gate env lands", async () => {
    const r = await subprocessGate(sh("echo y > new.txt"), null).run(ctx({ readOnly: false }));
    expect(r.passed).toBe(true);
    expect(await readFile(join(env, "new.txt"), "utf8")).toBe("y\n");
  });

  it("has no network: a server on the host's loopback is unreachable", async () => {
    const server = createServer((sock) => sock.end("hello-from-host\n"));
    await new Promise<void>((res) => server.listen(0, "127.0.0.1", () => res()));
    const { port } = server.address() as AddressInfo;
    try {
      const client =
        `const s=require("net").connect(${port},"127.0.0.1");` +
        `s.on("data",d=>{process.stdout.write("GOT:"+d);process.exit(0)});` +
        `s.on("error",e=>{console.log("ERR:"+e.code);process.exit(1)})`;
      const r = await subprocessGate(spec(["/usr/bin/node", "-e", client]), null).run(ctx());
      expect(r.passed).toBe(false);
      expect(r.log_excerpt).toMatch(/^ERR:/);
      expect(r.log_excerpt).not.toContain("hello-from-host");
    } finally {
      await new Promise<void>((res) => server.close(() => res()));
    }
  });

  it("keeps the metadata of the spec", () => {
    const g = subprocessGate(spec(["true"], { feedback: "log", writable: true }), "/tasks/t/heldout");
    expect(g).toMatchObject({
      id: "unit",
      kind: "subprocess",
      feedback: "log",
      writable: true,
      heldout: "/tasks/t/heldout",
    });
  });
});
