import { describe, expect, it } from "vitest";
import { type DoctorFacts, doctorChecks } from "../../src/cli/output/doctor-report.js";
import { privilegeSummary, sandboxUser } from "../../src/sandbox/sandbox-user.js";

describe("sandboxUser", () => {
  it("is null when loopgate is not root: sandboxed code runs as the caller, nothing changes", () => {
    expect(sandboxUser({}, 1000)).toBeNull();
    expect(sandboxUser({ LOOPGATE_SANDBOX_UID: "2000" }, 1000)).toBeNull();
  });

  it("as root: uid and gid 65534 by default, each overridable by its variable", () => {
    expect(sandboxUser({}, 0)).toEqual({ uid: 65534, gid: 65534 });
    expect(sandboxUser({ LOOPGATE_SANDBOX_UID: "2001" }, 0)).toEqual({ uid: 2001, gid: 65534 });
    expect(sandboxUser({ LOOPGATE_SANDBOX_UID: "2001", LOOPGATE_SANDBOX_GID: "2002" }, 0)).toEqual({
      uid: 2001,
      gid: 2002,
    });
  });

  it("refuses root, the invalid id and anything that is not a plain number, naming the variable", () => {
    for (const [name, value] of [
      ["LOOPGATE_SANDBOX_UID", "0"],
      ["LOOPGATE_SANDBOX_GID", "0"],
      ["LOOPGATE_SANDBOX_UID", "-5"],
      ["LOOPGATE_SANDBOX_UID", "nobody"],
      ["LOOPGATE_SANDBOX_UID", "1e3"],
      ["LOOPGATE_SANDBOX_GID", "4294967295"],
      ["LOOPGATE_SANDBOX_UID", "99999999999"],
    ] as const)
      expect(() => sandboxUser({ [name]: value }, 0), `${name}=${value}`).toThrow(name);
  });
});

describe("what doctor says runs as whom", () => {
  it("unprivileged: sandboxed code runs as the caller; as root: as the sandbox user", () => {
    expect(privilegeSummary(null, 1000)).toBe(
      "loopgate runs unprivileged: sandboxed code runs as you (uid 1000)",
    );
    const root = privilegeSummary({ uid: 4242, gid: 4243 }, 0);
    expect(root).toMatch(/^loopgate runs as root; .* run as uid 4242, gid 4243, no supplementary groups/);
  });

  it("a doctor check reports it, and an unusable sandbox user is a required fix", () => {
    const facts = (privileges: DoctorFacts["privileges"]): DoctorFacts => ({
      nodeVersion: "20.19.0",
      programs: { bwrap: "/usr/bin/bwrap", git: "/usr/bin/git", claude: null, codex: null },
      gatePrograms: { node: "/usr/bin/node", python3: "/usr/bin/python3" },
      sandboxSelfTest: null,
      store: { dir: "/w/.loopgate", writable: true, detail: "/w is writable" },
      env: {},
      ...(privileges ? { privileges } : {}),
    });
    const ok = doctorChecks(facts({ detail: "loopgate runs as root; …", error: null }));
    expect(ok.find((c) => c.id === "sandbox user")).toMatchObject({ state: "ok", need: "required" });
    const bad = doctorChecks(facts({ detail: "", error: "LOOPGATE_SANDBOX_UID=0 is not a usable id" }));
    expect(bad.find((c) => c.id === "sandbox user")).toMatchObject({ state: "missing", need: "required" });
    expect(bad.find((c) => c.id === "sandbox user")?.remedy).toContain("LOOPGATE_SANDBOX_UID");
    expect(doctorChecks(facts(undefined)).some((c) => c.id === "sandbox user")).toBe(false);
  });
});
