import { describe, expect, it } from "vitest";
import { bubblewrapArgv, type SandboxSpec } from "../../src/sandbox/bubblewrap.js";
import { SANDBOX_PATH, scrubbedEnv } from "../../src/sandbox/environment.js";
import { BoundedOutput } from "../../src/sandbox/process.js";

describe("BoundedOutput", () => {
  it("keeps everything under the limit, with no cut marker", () => {
    const out = new BoundedOutput(100);
    out.push("hello ");
    out.push("world");
    expect(out.toString()).toBe("hello world");
    expect(out.length).toBe(11);
  });

  it("keeps the head and the tail across many chunks and states how much it cut", () => {
    const out = new BoundedOutput(10);
    // 26 letters in chunks of 3: head is the first 5, tail the last 5, 16 cut.
    const letters = "abcdefghijklmnopqrstuvwxyz";
    for (let i = 0; i < letters.length; i += 3) out.push(letters.slice(i, i + 3));
    expect(out.toString()).toBe("abcde\n[… 16 characters cut …]\nvwxyz");
    expect(out.length).toBe(26);
  });
});

describe("scrubbedEnv", () => {
  const from = {
    PATH: "/home/u/.evil/bin",
    AWS_SECRET_ACCESS_KEY: "sk-parent",
    MY_TOKEN: "tok-1",
    HOME: "/home/u",
  };

  it("passes the fixed base only: not the caller's PATH, HOME or secrets", () => {
    const env = scrubbedEnv({ home: "/tmp", from });
    expect(env).toEqual({
      PATH: "/usr/local/bin:/usr/bin:/bin",
      HOME: "/tmp",
      TMPDIR: "/tmp",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      TZ: "UTC",
      NO_COLOR: "1",
    });
  });

  it("passes an allowlisted name, and only that one; an allowlisted name that is unset is absent", () => {
    const env = scrubbedEnv({ home: "/tmp", from, allow: ["MY_TOKEN", "NOT_SET_ANYWHERE"] });
    expect(env.MY_TOKEN).toBe("tok-1");
    expect(env).not.toHaveProperty("NOT_SET_ANYWHERE");
    expect(Object.values(env)).not.toContain("sk-parent");
  });

  it("reads the real process environment when no `from` is given, and still drops what is not allowed", () => {
    process.env.LOOPGATE_UNIT_SECRET = "unit-secret-value";
    try {
      const env = scrubbedEnv({ home: "/tmp" });
      expect(Object.values(env)).not.toContain("unit-secret-value");
      expect(scrubbedEnv({ home: "/tmp", allow: ["LOOPGATE_UNIT_SECRET"] }).LOOPGATE_UNIT_SECRET).toBe(
        "unit-secret-value",
      );
    } finally {
      delete process.env.LOOPGATE_UNIT_SECRET;
    }
  });

  it("lets `extra` add variables", () => {
    expect(
      scrubbedEnv({ home: "/tmp", extra: { PYTHONDONTWRITEBYTECODE: "1" } }).PYTHONDONTWRITEBYTECODE,
    ).toBe("1");
  });

  it("uses system directories only in SANDBOX_PATH", () => {
    expect(SANDBOX_PATH.split(":")).toEqual(["/usr/local/bin", "/usr/bin", "/bin"]);
  });
});

describe("bubblewrapArgv", () => {
  const spec: SandboxSpec = {
    argv: ["/bin/sh", "-c", "true"],
    cwd: "/w/ws",
    writable: ["/w/ws"],
    readonly: ["/w/tool"],
    env: {},
    network: false,
    timeoutMs: 1000,
  };

  /** The index of a flag followed by its operands, or -1. */
  function find(argv: string[], ...seq: string[]): number {
    for (let i = 0; i + seq.length <= argv.length; i++) if (seq.every((s, j) => argv[i + j] === s)) return i;
    return -1;
  }

  it("isolates: all namespaces, no caps, new session, dies with its parent, no network", () => {
    const argv = bubblewrapArgv(spec, "/usr/bin/bwrap");
    expect(argv[0]).toBe("/usr/bin/bwrap");
    for (const flag of ["--unshare-all", "--new-session", "--die-with-parent"]) expect(argv).toContain(flag);
    expect(find(argv, "--cap-drop", "ALL")).toBeGreaterThan(0);
    expect(argv).not.toContain("--share-net");
    expect(find(argv, "--tmpfs", "/tmp")).toBeGreaterThan(0);
    expect(find(argv, "--ro-bind", "/usr", "/usr")).toBeGreaterThan(0);
  });

  it("shares the network only when asked", () => {
    expect(bubblewrapArgv({ ...spec, network: true })).toContain("--share-net");
  });

  it("binds the writable dir read-write and the readonly path read-only, then runs argv after --", () => {
    const argv = bubblewrapArgv(spec);
    expect(find(argv, "--bind", "/w/ws", "/w/ws")).toBeGreaterThan(0);
    expect(find(argv, "--ro-bind", "/w/tool", "/w/tool")).toBeGreaterThan(0);
    expect(find(argv, "--bind", "/w/tool", "/w/tool")).toBe(-1);
    expect(find(argv, "--chdir", "/w/ws")).toBeGreaterThan(0);
    const dash = argv.indexOf("--");
    expect(argv.slice(dash + 1)).toEqual(["/bin/sh", "-c", "true"]);
    // tmpfs /tmp comes before the binds, or it would hide a workspace under /tmp.
    expect(find(argv, "--tmpfs", "/tmp")).toBeLessThan(find(argv, "--bind", "/w/ws", "/w/ws"));
  });

  it("never mounts the host root, /home or /root", () => {
    const argv = bubblewrapArgv(spec);
    for (const p of ["/", "/home", "/root", "/proc"]) {
      expect(find(argv, "--bind", p, p)).toBe(-1);
      expect(find(argv, "--ro-bind", p, p)).toBe(-1);
    }
  });
});
