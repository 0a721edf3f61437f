import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentSandboxSelfTest } from "../../../src/agent/tools/self-test.js";
import { HELDOUT_SECRET, useFixture } from "./fixture.js";

function running(marker: string): string {
  try {
    return execFileSync("pgrep", ["-af", marker], { encoding: "utf8" });
  } catch {
    return "";
  }
}

describe("bash tool (bubblewrap)", () => {
  const f = useFixture("bubblewrap");

  it("runs in the workspace, reports the exit code, and its writes land there", async () => {
    const ok = await f.call("bash", { command: "pwd; echo made > made.txt" });
    expect(ok).toMatchObject({ isError: false, exitCode: 0, subject: "pwd; echo made > made.txt" });
    expect(ok.content).toBe(`exit code: 0\n${realpathSync(f.ws)}\n`);
    expect(readFileSync(path.join(f.ws, "made.txt"), "utf8")).toBe("made\n");
    const bad = await f.call("bash", { command: "echo oops >&2; exit 3" });
    expect(bad).toMatchObject({ isError: true, exitCode: 3, content: "exit code: 3\noops\n" });
  });

  it("leaks none of the parent's environment, not even through /proc/1/environ", async () => {
    const secret = `lg-secret-${process.pid}-${Date.now()}`;
    process.env.LG_TOOLS_SECRET = secret;
    try {
      const r = await f.call("bash", { command: "tr '\\0' '\\n' < /proc/1/environ; echo ---; env" });
      expect(r.exitCode).toBe(0);
      const [pid1, env] = r.content.split("---\n");
      expect(pid1).toContain("PATH=/usr/local/bin:/usr/bin:/bin");
      expect(env).toContain("HOME=/tmp");
      expect(r.content).not.toContain(secret);
      expect(r.content).not.toContain("LG_TOOLS_SECRET");
      const names = (env ?? "").split("\n").flatMap((l) => /^([A-Za-z_]\w*)=/.exec(l)?.[1] ?? []);
      const allowed = [
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "TZ",
        "NO_COLOR",
        "PWD",
        "SHLVL",
        "_",
        "OLDPWD",
      ];
      expect(names.filter((n) => !allowed.includes(n))).toEqual([]);
    } finally {
      delete process.env.LG_TOOLS_SECRET;
    }
  });

  it("cannot read a sibling held-out directory: it is not mounted", async () => {
    const r = await f.call("bash", { command: `cat ${f.heldout}/x; cat ../heldout/x` });
    expect(r.isError).toBe(true);
    expect(r.content).not.toContain(HELDOUT_SECRET);
    expect(r.content).toContain("No such file or directory");
  });

  it("cannot write the system root", async () => {
    const probe = `/usr/lg-probe-${process.pid}`;
    const r = await f.call("bash", { command: `echo x > ${probe}` });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/Read-only file system/);
    expect(existsSync(probe)).toBe(false);
  });

  describe("network", () => {
    let server: Server;
    let port: number;
    const token = `pong-${process.pid}`;
    beforeAll(async () => {
      server = createServer((s) => s.end(`${token}\n`));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const connect = () => `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;

    it("cannot connect to a host server when network is off", async () => {
      const r = await f.call("bash", { command: connect() });
      expect(r.isError).toBe(true);
      expect(r.content).not.toContain(token);
    });

    it("can connect when the task allows the network", async () => {
      const r = await f.call("bash", { command: connect() }, { network: true });
      expect(r).toMatchObject({ isError: false, exitCode: 0 });
      expect(r.content).toContain(token);
    });
  });

  it("bounds 1 MB of output, keeping head and tail and saying how much was cut", async () => {
    const r = await f.call("bash", {
      command: "echo HEAD-MARK; yes 0123456789 | head -c 1000000; echo TAIL-MARK",
    });
    // 10 + 1,000,000 + 10 characters produced; 8,000 kept at each end.
    expect(r.content).toContain("[… 984020 characters cut …]");
    expect(r.content.startsWith("exit code: 0\nHEAD-MARK\n0123456789")).toBe(true);
    expect(r.content.endsWith("TAIL-MARK\n")).toBe(true);
    expect(r.content.length).toBeLessThan(16_100);
  });

  it("kills a command at its timeout, grandchildren included", async () => {
    const marker = `sleep 1007.${process.pid}`;
    const r = await f.call("bash", { command: `${marker} & ${marker}; echo never`, timeout_seconds: 1 });
    expect(r).toMatchObject({ isError: true, exitCode: null });
    expect(r.content).toMatch(/^timed out after 1s: the command and everything it started were killed/);
    expect(r.content).not.toContain("never");
    expect(r.durationMs).toBeLessThan(8000);
    await new Promise((res) => setTimeout(res, 200));
    expect(running(marker)).toBe("");
  });

  it("uses the context's timeout when it is shorter than the requested one", async () => {
    const r = await f.call("bash", { command: "sleep 30", timeout_seconds: 600 }, { timeoutMs: 500 });
    expect(r.content).toMatch(/^timed out after 0\.5s/);
  });

  it("rejects an over-long command without running it", async () => {
    const r = await f.call("bash", { command: `touch ran.txt #${"x".repeat(20_000)}` });
    expect(r).toMatchObject({ isError: true, valid: false });
    expect(r.content).toMatch(/command: .*<=20000 characters/);
    expect(existsSync(path.join(f.ws, "ran.txt"))).toBe(false);
  });
});

describe("bash tool (explicitly unsandboxed)", () => {
  const f = useFixture("none");
  it("still runs in the workspace with a scrubbed environment", async () => {
    process.env.LG_TOOLS_SECRET = "unsandboxed-secret";
    try {
      const r = await f.call("bash", { command: "pwd; env" });
      expect(r.content).toContain(realpathSync(f.ws));
      expect(r.content).not.toContain("unsandboxed-secret");
    } finally {
      delete process.env.LG_TOOLS_SECRET;
    }
  });
});

describe("agentSandboxSelfTest", () => {
  it("passes on this machine, sandboxed and not", async () => {
    await expect(agentSandboxSelfTest()).resolves.toBeUndefined();
    await expect(agentSandboxSelfTest("none")).resolves.toBeUndefined();
  });
});
