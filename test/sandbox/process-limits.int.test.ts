// Every sandbox gets process, file-size and memory rlimits through prlimit (real bubblewrap).
import { execFile } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, type ProcessLimits } from "../../src/core/task/limits.js";
import { runSandboxed, type SandboxSpec } from "../../src/sandbox/bubblewrap.js";
import { scrubbedEnv } from "../../src/sandbox/environment.js";

const MiB = 1024 * 1024;
const run = promisify(execFile);
let ws: string;
beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), "loopgate-limits-"));
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

const spec = (script: string, limits?: ProcessLimits): SandboxSpec => ({
  argv: ["/bin/sh", "-c", script],
  cwd: ws,
  writable: [ws],
  readonly: [],
  env: scrubbedEnv({ home: "/tmp" }),
  network: false,
  // Generous: every case ends by itself in well under a second; a machine under load must not fail it.
  timeoutMs: 120_000,
  ...(limits ? { limits } : {}),
});

/** A limit from /proc/self/limits as the sandboxed shell sees it: [soft, hard]. */
function limitOf(limits: string, name: string): string[] {
  const line = limits.split("\n").find((l) => l.startsWith(name));
  return line?.slice(name.length).trim().split(/\s+/).slice(0, 2) ?? [];
}

describe("process limits", () => {
  it("the defaults reach the sandboxed program, soft and hard", async () => {
    const r = await runSandboxed(spec("cat /proc/self/limits"), "bubblewrap");
    expect(r.exitCode, r.output).toBe(0);
    expect(limitOf(r.output, "Max processes")).toEqual([
      String(DEFAULT_LIMITS.processes),
      String(DEFAULT_LIMITS.processes),
    ]);
    expect(limitOf(r.output, "Max file size")).toEqual([
      String(DEFAULT_LIMITS.file_size),
      String(DEFAULT_LIMITS.file_size),
    ]);
    expect(limitOf(r.output, "Max data size")).toEqual([
      String(DEFAULT_LIMITS.memory),
      String(DEFAULT_LIMITS.memory),
    ]);
  });

  it("the sandboxed program cannot raise its hard limit", async () => {
    const r = await runSandboxed(
      spec("prlimit --pid $$ --fsize=unlimited:unlimited && echo RAISED", {
        processes: 64,
        fileSize: MiB,
        memory: DEFAULT_LIMITS.memory,
      }),
      "bubblewrap",
    );
    expect(r.output).not.toContain("RAISED");
  });

  it("a big write stops at limits.file_size (SIGXFSZ), and so does a sparse truncate", async () => {
    const limits = { processes: 256, fileSize: MiB, memory: DEFAULT_LIMITS.memory };
    const r = await runSandboxed(spec("head -c 100000000 /dev/zero > big.bin", limits), "bubblewrap");
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).not.toBe(0);
    expect((await stat(join(ws, "big.bin"))).size).toBe(MiB);
    const t = await runSandboxed(spec("truncate -s 1G sparse.bin; echo rc=$?", limits), "bubblewrap");
    expect(t.output).toMatch(/rc=[1-9]/);
    expect((await stat(join(ws, "sparse.bin")).catch(() => ({ size: 0 }))).size).toBeLessThanOrEqual(MiB);
  });

  it("an allocation past limits.memory fails in the program (python MemoryError)", async () => {
    const r = await runSandboxed(
      {
        ...spec("", { processes: 256, fileSize: MiB, memory: 256 * MiB }),
        argv: ["/usr/bin/python3", "-c", "x = bytearray(1024 * 1024 * 1024); print('ALLOCATED')"],
      },
      "bubblewrap",
    );
    expect(r.output).toContain("MemoryError");
    expect(r.output).not.toContain("ALLOCATED");
    expect(r.exitCode).not.toBe(0);
  });

  it("node starts under the default memory limit (RLIMIT_DATA leaves V8's reservations alone)", async () => {
    const r = await runSandboxed(
      {
        ...spec(""),
        argv: [process.execPath, "-e", "new WebAssembly.Memory({ initial: 256 }); console.log('NODE-OK')"],
        readonly: [process.execPath],
      },
      "bubblewrap",
    );
    expect(r.output, r.output).toContain("NODE-OK");
  });

  // The kernel never applies RLIMIT_NPROC to host root; as root (CI) the sandboxed process runs as the
  // sandbox user, whose limit is set inside the sandbox's own user namespace. The fixture runs as whoever
  // runs the suite, in a process of its own (the limit must not touch this test process).
  it("a fork bomb stops at limits.processes", async () => {
    const fixture = join(import.meta.dirname, "..", "fixtures", "limits", "fork-bomb.ts");
    const argv = [process.execPath, "--import", "tsx", fixture];
    const { stdout } = await run(argv[0] as string, argv.slice(1), {
      env: { PATH: "/usr/bin:/bin", HOME: "/tmp" },
      timeout: 120_000,
    });
    const r = JSON.parse(stdout) as { timedOut: boolean; exitCode: number | null; output: string };
    expect(r.timedOut).toBe(false);
    expect(r.output).not.toContain("ALL-STARTED");
    expect(r.output).toMatch(/fork/i);
  }, 150_000);
});
