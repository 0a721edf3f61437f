import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runSandboxed, type SandboxSpec, sandboxSelfTest } from "../../src/sandbox/bubblewrap.js";
import { resolveProgram, scrubbedEnv } from "../../src/sandbox/environment.js";

let root: string;
let ws: string;
let heldout: string;
let tool: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "lg-sbx-"));
  ws = join(root, "ws");
  heldout = join(root, "heldout");
  tool = join(root, "tool");
  await mkdir(ws);
  await mkdir(heldout);
  await mkdir(tool);
  await writeFile(join(root, "parent-marker.txt"), "parent");
  await writeFile(join(heldout, "expected.txt"), "the answer");
  await writeFile(join(tool, "config.txt"), "tool config");
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function sh(script: string, over: Partial<SandboxSpec> = {}) {
  return runSandboxed(
    {
      argv: ["/bin/sh", "-c", script],
      cwd: ws,
      writable: [ws],
      readonly: [],
      env: scrubbedEnv({ home: "/tmp", from: {} }),
      network: false,
      timeoutMs: 15_000,
      ...over,
    },
    "bubblewrap",
  );
}

/** Lines of `NAME=value` from `env`-style output, as names. */
function names(block: string): string[] {
  return block
    .split("\n")
    .filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l))
    .map((l) => l.slice(0, l.indexOf("=")))
    .sort();
}

describe("runSandboxed (bubblewrap): filesystem", () => {
  it("can write its writable dir, and the write lands on the host", async () => {
    const r = await sh("echo written > out.txt && echo ok");
    expect(r.exitCode).toBe(0);
    expect(await readFile(join(ws, "out.txt"), "utf8")).toBe("written\n");
  });

  it("cannot write a read-only mount, though it can read it", async () => {
    const r = await sh(
      `cat ${tool}/config.txt; echo x > ${tool}/config.txt && echo WROTE-RO; echo y > ${tool}/new && echo WROTE-NEW; true`,
      {
        readonly: [tool],
      },
    );
    expect(r.output).toContain("tool config");
    expect(r.output).not.toContain("WROTE-RO");
    expect(r.output).not.toContain("WROTE-NEW");
    expect(await readFile(join(tool, "config.txt"), "utf8")).toBe("tool config");
    expect(existsSync(join(tool, "new"))).toBe(false);
  });

  it("cannot write /usr or /etc", async () => {
    const r = await sh("touch /usr/lg-probe && echo WROTE-USR; touch /etc/lg-probe && echo WROTE-ETC; true");
    expect(r.output).not.toContain("WROTE-USR");
    expect(r.output).not.toContain("WROTE-ETC");
    expect(existsSync("/usr/lg-probe")).toBe(false);
    expect(existsSync("/etc/lg-probe")).toBe(false);
  });

  it("sees a curated /etc: name resolution, TLS roots and accounts, never shadow, ssh keys or private TLS keys", async () => {
    // Counted from the host's own /etc: each of these exists on a Debian machine.
    const r = await sh(
      "for f in shadow gshadow ssh ssl/private sudoers npmrc pip.conf postgresql; do test -e /etc/$f && echo SEES-$f; done; " +
        "cat /etc/shadow 2>/dev/null | head -c 20; " +
        "test -r /etc/passwd && echo HAS-passwd; test -r /etc/hosts && echo HAS-hosts; test -d /etc/ssl/certs && echo HAS-certs",
    );
    expect(r.exitCode).toBe(0);
    expect(r.output).not.toContain("SEES-");
    expect(r.output).not.toContain("root:");
    for (const want of ["HAS-passwd", "HAS-hosts", "HAS-certs"]) expect(r.output).toContain(want);
  });

  it("/etc is one read-only mount (a copy of the curated entries), not one mount per entry", async () => {
    // mountinfo's fifth field is the mount point: count those at /etc or under it.
    const r = await sh('awk \'$5 == "/etc" || index($5, "/etc/") == 1\' /proc/self/mountinfo');
    expect(r.exitCode).toBe(0);
    const mounts = r.output.trim().split("\n");
    expect(mounts).toHaveLength(1);
    expect(mounts[0]?.split(" ")[5]).toMatch(/^ro\b/);
  });

  it("cannot see a sibling held-out dir nor the parent's files", async () => {
    const r = await sh(
      `test -e ${heldout}/expected.txt && echo SEES-HELDOUT; cat ${heldout}/expected.txt 2>/dev/null; ` +
        `test -e ${root}/parent-marker.txt && echo SEES-PARENT; echo "LS:$(ls -A ${root})"`,
    );
    expect(r.exitCode).toBe(0);
    expect(r.output).not.toContain("SEES-HELDOUT");
    expect(r.output).not.toContain("the answer");
    expect(r.output).not.toContain("SEES-PARENT");
    // Only the mount point bwrap made for the workspace exists in the parent.
    expect(r.output).toContain("LS:ws\n");
  });

  it("cannot see the host's /root or /home", async () => {
    const r = await sh("ls -A /root 2>/dev/null | head -3; ls -A /home 2>/dev/null | head -3; echo end");
    expect(r.output.trim()).toBe("end");
  });

  it("has a private, writable /tmp that is not the host's /tmp", async () => {
    const r = await sh(
      `echo hi > /tmp/lg-private && cat /tmp/lg-private; test -e ${root} && echo ROOT-VISIBLE; true`,
      {
        writable: [],
        cwd: "/",
      },
    );
    expect(r.output).toContain("hi");
    expect(r.output).not.toContain("ROOT-VISIBLE");
    expect(existsSync("/tmp/lg-private")).toBe(false);
  });
});

describe("runSandboxed (bubblewrap): environment", () => {
  const SECRET = "sk-parent-secret-7f3a9c";
  beforeEach(() => {
    process.env.LG_TEST_PARENT_SECRET = SECRET;
    process.env.LG_TEST_ALLOWED = "allowed-value-41";
  });
  afterEach(() => {
    delete process.env.LG_TEST_PARENT_SECRET;
    delete process.env.LG_TEST_ALLOWED;
  });

  it("a secret in the parent's environment reaches neither the child nor /proc/1/environ", async () => {
    const env = scrubbedEnv({ home: "/tmp", allow: ["LG_TEST_ALLOWED"] });
    const r = await sh("env; echo ---PID1---; tr '\\0' '\\n' < /proc/1/environ; echo; echo ---END---", {
      env,
    });
    expect(r.exitCode).toBe(0);
    expect(r.output).not.toContain(SECRET);
    expect(r.output).not.toContain("LG_TEST_PARENT_SECRET");
    const [child = "", rest = ""] = r.output.split("---PID1---");
    const pid1 = rest.split("---END---")[0] ?? "";
    // PID 1 holds exactly the variables we gave the child, nothing of the parent's.
    expect(names(pid1)).toEqual(
      ["HOME", "LANG", "LC_ALL", "LG_TEST_ALLOWED", "NO_COLOR", "PATH", "TMPDIR", "TZ"].sort(),
    );
    expect(child).toContain("LG_TEST_ALLOWED=allowed-value-41");
    expect(child).toContain("PATH=/usr/local/bin:/usr/bin:/bin");
    expect(child).toContain("HOME=/tmp");
  });

  it("a name not on the allowlist does not pass, even when `from` holds it", async () => {
    const env = scrubbedEnv({ home: "/tmp", from: { TOKEN: "from-secret-1", OK: "ok-1" }, allow: ["OK"] });
    const r = await sh("env", { env });
    expect(r.output).toContain("OK=ok-1");
    expect(r.output).not.toContain("from-secret-1");
  });
});

describe("runSandboxed (bubblewrap): network", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((sock) => sock.end("hello-from-host\n"));
    await new Promise<void>((res) => server.listen(0, "127.0.0.1", () => res()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((res) => server.close(() => res()));
  });

  const client = () =>
    `const s=require("net").connect(${port},"127.0.0.1");` +
    `s.on("data",d=>{process.stdout.write("GOT:"+d);process.exit(0)});` +
    `s.on("error",e=>{console.log("ERR:"+e.code);process.exit(3)});` +
    `setTimeout(()=>{console.log("ERR:timeout");process.exit(4)},5000)`;

  it("without network, a connection to a server on the host's loopback fails", async () => {
    const r = await runSandboxed(
      {
        argv: ["/usr/bin/node", "-e", client()],
        cwd: "/",
        writable: [],
        readonly: [],
        env: scrubbedEnv({ home: "/tmp", from: {} }),
        network: false,
        timeoutMs: 15_000,
      },
      "bubblewrap",
    );
    expect(r.output).not.toContain("hello-from-host");
    expect(r.exitCode).toBe(3);
    expect(r.output).toMatch(/ERR:(ECONNREFUSED|ENETUNREACH|EADDRNOTAVAIL)/);
  });

  it("with network, --share-net reaches the host's loopback", async () => {
    const r = await runSandboxed(
      {
        argv: ["/usr/bin/node", "-e", client()],
        cwd: "/",
        writable: [],
        readonly: [],
        env: scrubbedEnv({ home: "/tmp", from: {} }),
        network: true,
        timeoutMs: 15_000,
      },
      "bubblewrap",
    );
    expect(r.output).toContain("GOT:hello-from-host");
    expect(r.exitCode).toBe(0);
  });
});

describe("runSandboxed (bubblewrap): processes", () => {
  function remaining(marker: string): string {
    try {
      return execFileSync("pgrep", ["-af", marker], { encoding: "utf8" });
    } catch {
      return ""; // pgrep exits 1 when nothing matches
    }
  }

  it("a timeout kills the whole tree, including a background grandchild, and returns promptly", async () => {
    const marker = `lg-grandchild-${process.pid}-${Date.now()}`;
    const t0 = performance.now();
    const pending = sh(`sh -c 'sleep 100; true' ${marker} & sleep 100`, { timeoutMs: 3000 });
    // Control: the host sees the grandchild while it lives, so "none remains" below means something.
    let seen = "";
    while (!seen && performance.now() - t0 < 2500) {
      await new Promise((res) => setTimeout(res, 50));
      seen = remaining(marker);
    }
    expect(seen).toContain(marker);
    const r = await pending;
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(performance.now() - t0).toBeLessThan(8000);
    expect(remaining(marker)).toBe("");
  });

  it("a program that exits leaves no background job behind and is not held until the timeout", async () => {
    const marker = `lg-bg-${process.pid}-${Date.now()}`;
    const t0 = performance.now();
    const r = await sh(`sh -c 'sleep 100; true' ${marker} & echo started`, { timeoutMs: 20_000 });
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(remaining(marker)).toBe("");
  });

  it("bounds the output: head and tail kept, the cut stated", async () => {
    // 5 + 99991 + 4 = 100000 characters.
    const r = await sh(`printf BEGIN; head -c 99991 /dev/zero | tr '\\0' x; printf 'END\\n'`, {
      maxOutputBytes: 1000,
    });
    expect(r.outputBytes).toBe(100_000);
    expect(r.output.startsWith("BEGIN")).toBe(true);
    expect(r.output.endsWith("xEND\n")).toBe(true);
    expect(r.output).toContain("[… 99000 characters cut …]");
    expect(r.output.length).toBeLessThan(1100);
  });

  it("reports the exit code of the sandboxed program", async () => {
    expect((await sh("exit 7")).exitCode).toBe(7);
  });
});

describe("sandboxSelfTest", () => {
  it("passes on this machine", async () => {
    await expect(sandboxSelfTest()).resolves.toBeUndefined();
  });
});

describe("resolveProgram", () => {
  it("finds env on the sandbox PATH", () => {
    expect(resolveProgram("env", "/")).toBe("/usr/bin/env");
  });

  it("finds a relative path from cwd, and an absolute one as is", async () => {
    const script = join(tool, "run.sh");
    await writeFile(script, "#!/bin/sh\n");
    await chmod(script, 0o755);
    expect(resolveProgram("./run.sh", tool)).toBe(script);
    expect(resolveProgram(script, "/")).toBe(script);
  });

  it("refuses a file that is not executable, a directory, and a missing name", async () => {
    const plain = join(tool, "plain.sh");
    await writeFile(plain, "#!/bin/sh\n");
    await chmod(plain, 0o644);
    expect(resolveProgram("./plain.sh", tool)).toBeNull();
    expect(resolveProgram(tool, "/")).toBeNull();
    expect(resolveProgram("lg-no-such-program-xyz", "/")).toBeNull();
  });

  it("does not search the caller's PATH for a bare name", async () => {
    const script = join(tool, "lg-only-here");
    await writeFile(script, "#!/bin/sh\n");
    await chmod(script, 0o755);
    expect(resolveProgram("lg-only-here", "/")).toBeNull();
    expect(resolveProgram("lg-only-here", "/", tool)).toBe(script);
  });
});
