import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/sandbox/bubblewrap.js";
import { runProcess } from "../../src/sandbox/process.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "lg-proc-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ENV = { PATH: "/usr/bin:/bin" };

function remaining(marker: string): string {
  try {
    return execFileSync("pgrep", ["-af", marker], { encoding: "utf8" });
  } catch {
    return "";
  }
}

describe("runProcess (no sandbox)", () => {
  it("reports the exit code, and runs in cwd", async () => {
    const r = await runProcess(["/bin/sh", "-c", "pwd; exit 3"], { cwd: dir, env: ENV, timeoutMs: 10_000 });
    expect(r.exitCode).toBe(3);
    expect(r.signal).toBeNull();
    expect(r.output.trim()).toBe(dir);
  });

  it("gives the child exactly the environment passed, nothing inherited", async () => {
    process.env.LG_PROC_SECRET = "proc-secret-9";
    try {
      const r = await runProcess(["/usr/bin/env"], { cwd: dir, env: { ONLY: "this" }, timeoutMs: 10_000 });
      expect(r.output.trim()).toBe("ONLY=this");
    } finally {
      delete process.env.LG_PROC_SECRET;
    }
  });

  it("reports a program that cannot start as spawnError, without throwing", async () => {
    const r = await runProcess([join(dir, "missing-program")], { cwd: dir, env: ENV, timeoutMs: 10_000 });
    expect(r.spawnError).toMatch(/missing-program.*ENOENT/);
    expect(r.exitCode).not.toBe(0);
  });

  it("reports a signal death as signal, not as an exit code", async () => {
    const r = await runProcess(["/bin/sh", "-c", "kill -SEGV $$"], { cwd: dir, env: ENV, timeoutMs: 10_000 });
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe("SIGSEGV");
  });

  it("a timeout kills the process group, grandchild included", async () => {
    const marker = `lg-proc-gc-${process.pid}-${Date.now()}`;
    const t0 = performance.now();
    const r = await runProcess(["/bin/sh", "-c", `sh -c 'sleep 100; true' ${marker} & sleep 100`], {
      cwd: dir,
      env: ENV,
      timeoutMs: 500,
    });
    expect(r.timedOut).toBe(true);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(remaining(marker)).toBe("");
  });

  it("a timeout past setTimeout's 2^31-1 ms limit (600h) waits: the program finishes, nothing is killed", async () => {
    // A plain setTimeout would fire after 1 ms and kill this program long before its 300 ms sleep ends.
    const r = await runProcess(["/bin/sh", "-c", "sleep 0.3; echo done"], {
      cwd: dir,
      env: ENV,
      timeoutMs: 600 * 3_600_000,
    });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(0);
    expect(r.output).toBe("done\n");
  });

  it("a program that exits while a background job holds its stdout returns at once, not at the timeout", async () => {
    const marker = `lg-proc-bg-${process.pid}-${Date.now()}`;
    const t0 = performance.now();
    const r = await runProcess(["/bin/sh", "-c", `sh -c 'sleep 100; true' ${marker} & echo started`], {
      cwd: dir,
      env: ENV,
      timeoutMs: 8000,
    });
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.output).toBe("started\n");
    expect(performance.now() - t0).toBeLessThan(4000);
    expect(remaining(marker)).toBe("");
  });

  it("a descendant that left the process group (setsid) cannot hold the result past a short grace", async () => {
    const marker = `lg-proc-setsid-${process.pid}-${Date.now()}`;
    const t0 = performance.now();
    try {
      const r = await runProcess(
        [
          "/bin/sh",
          "-c",
          `setsid sh -c ': > escaped; sleep 100; true' ${marker} & until test -e escaped; do sleep 0.05; done; echo started`,
        ],
        {
          cwd: dir,
          env: ENV,
          timeoutMs: 30_000,
        },
      );
      expect(r.exitCode).toBe(0);
      expect(r.timedOut).toBe(false);
      expect(r.output).toBe("started\n");
      expect(performance.now() - t0).toBeLessThan(6000);
    } finally {
      // It escaped the group on purpose; end exactly that process, by its id.
      for (const line of remaining(marker).split("\n").filter(Boolean))
        process.kill(Number(line.split(" ")[0]), "SIGKILL");
    }
  });

  it("keeps output written after the program exited but before its pipe drained", async () => {
    const r = await runProcess(["/bin/sh", "-c", "head -c 200000 /dev/zero | tr '\\0' y"], {
      cwd: dir,
      env: ENV,
      timeoutMs: 10_000,
      maxOutputBytes: 1_000_000,
    });
    expect(r.outputBytes).toBe(200_000);
  });

  it("decodes a UTF-8 character split across two writes", async () => {
    const script =
      "process.stdout.write(Buffer.from([0xc3]));setTimeout(()=>process.stdout.write(Buffer.from([0xa9,0x0a])),200)";
    const r = await runProcess(["/usr/bin/node", "-e", script], { cwd: dir, env: ENV, timeoutMs: 10_000 });
    expect(r.output).toBe("é\n");
  });

  it("streams output to onOutput as it comes", async () => {
    const chunks: string[] = [];
    await runProcess(["/bin/sh", "-c", "echo one; echo two >&2"], {
      cwd: dir,
      env: ENV,
      timeoutMs: 10_000,
      onOutput: (c) => chunks.push(c),
    });
    expect(chunks.join("").split("\n").sort()).toEqual(["", "one", "two"]);
  });

  it("runSandboxed with mode none runs directly (a host path outside any mount is visible)", async () => {
    const r = await runSandboxed(
      {
        argv: ["/bin/sh", "-c", `test -d ${dir} && echo VISIBLE`],
        cwd: "/",
        writable: [],
        readonly: [],
        env: ENV,
        network: false,
        timeoutMs: 10_000,
      },
      "none",
    );
    expect(r.output).toContain("VISIBLE");
  });
});

describe("runProcess captureBytes", () => {
  it("keeps stdout and stderr apart and byte for byte, beside the combined output", async () => {
    const r = await runProcess(["/bin/sh", "-c", "printf 'a\\r\\n\\377'; printf 'oops' >&2; printf 'b'"], {
      cwd: dir,
      env: ENV,
      timeoutMs: 10_000,
      captureBytes: 1024,
    });
    expect(r.streams?.stdout).toEqual(Buffer.from([0x61, 0x0d, 0x0a, 0xff, 0x62]));
    expect(r.streams?.stderr.toString()).toBe("oops");
    expect(r.streams?.overflow).toBe(false);
    expect(r.output).toContain("oops");
  });

  it("says when a stream is larger than the limit, and keeps only the limit", async () => {
    const r = await runProcess(["/bin/sh", "-c", "head -c 5000 /dev/zero"], {
      cwd: dir,
      env: ENV,
      timeoutMs: 10_000,
      captureBytes: 1000,
    });
    expect(r.streams?.stdout.length).toBe(1000);
    expect(r.streams?.overflow).toBe(true);
    const plain = await runProcess(["/bin/true"], { cwd: dir, env: ENV, timeoutMs: 10_000 });
    expect(plain.streams).toBeUndefined();
  });
});

describe("runSandboxed binds", () => {
  it("mounts a host folder read-only at another path, and starts there", async () => {
    const { writeFile } = await import("node:fs/promises");
    await writeFile(join(dir, "f.txt"), "inside\n");
    const r = await runSandboxed(
      {
        argv: ["/bin/sh", "-c", "pwd; cat f.txt; { echo x > g.txt; } 2>/dev/null || echo READONLY"],
        cwd: "/tree",
        writable: [],
        readonly: [],
        binds: [{ source: dir, target: "/tree" }],
        env: ENV,
        network: false,
        timeoutMs: 10_000,
      },
      "bubblewrap",
    );
    expect(r.output).toBe("/tree\ninside\nREADONLY\n");
    expect(() =>
      runSandboxed(
        {
          argv: ["/bin/true"],
          cwd: "/",
          writable: [],
          readonly: [],
          binds: [{ source: dir, target: "/t" }],
          env: ENV,
          network: false,
          timeoutMs: 1000,
        },
        "none",
      ),
    ).toThrow(/need the bubblewrap sandbox/);
  });
});
