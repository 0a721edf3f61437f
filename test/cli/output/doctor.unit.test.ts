import { describe, expect, it } from "vitest";
import {
  type DoctorFacts,
  doctorChecks,
  doctorReport,
  formatDoctor,
} from "../../../src/cli/output/doctor-report.js";

const healthy = (): DoctorFacts => ({
  nodeVersion: "20.19.0",
  programs: {
    bwrap: "/usr/bin/bwrap",
    git: "/usr/bin/git",
    claude: null,
    codex: null,
  },
  gatePrograms: { node: "/usr/bin/node", python3: "/usr/bin/python3" },
  sandboxSelfTest: null,
  store: { dir: "/w/.loopgate", writable: true, detail: "/w is writable" },
  env: {},
});
const report = (f: DoctorFacts) => doctorReport(doctorChecks(f));
const byId = (f: DoctorFacts, id: string) => doctorChecks(f).find((c) => c.id === id);

describe("loopgate doctor's checks", () => {
  it("a healthy machine without a provider or agent CLIs is all good (exit 0): unconfigured is not missing", () => {
    const r = report(healthy());
    expect(r.exit).toBe(0);
    expect(r.checks.filter((c) => c.state === "skipped").map((c) => c.id)).toEqual([
      "model provider",
      "claude",
      "codex",
    ]);
  });

  it("bubblewrap absent: required missing (exit 2), with the install command and the self-test not run", () => {
    const f = { ...healthy(), programs: { ...healthy().programs, bwrap: null }, sandboxSelfTest: undefined };
    const r = report(f);
    expect(r.exit).toBe(2);
    expect(byId(f, "bubblewrap")).toMatchObject({ state: "missing", need: "required" });
    expect(byId(f, "bubblewrap")?.remedy).toContain("apt-get install -y bubblewrap");
    expect(byId(f, "sandbox self-test")?.state).toBe("missing");
    expect(formatDoctor(r)).toContain("fix: install bubblewrap");
  });

  it("a failing sandbox self-test is required missing, with the user-namespace remedy", () => {
    const f = {
      ...healthy(),
      sandboxSelfTest: "sandbox self-test failed: bwrap exited 1: setting up uid map",
    };
    expect(report(f).exit).toBe(2);
    expect(byId(f, "sandbox self-test")?.detail).toContain("uid map");
    expect(byId(f, "sandbox self-test")?.remedy).toContain("unprivileged_userns_clone");
  });

  it("Node older than 20, no git, an unwritable store: each is required (exit 2) and says what to do", () => {
    for (const f of [
      { ...healthy(), nodeVersion: "18.20.1" },
      { ...healthy(), programs: { ...healthy().programs, git: null } },
      { ...healthy(), store: { dir: "/ro/.loopgate", writable: false, detail: "/ro is not writable" } },
    ]) {
      const r = report(f);
      expect(r.exit).toBe(2);
      const bad = r.checks.filter((c) => c.state === "missing");
      expect(bad).toHaveLength(1);
      expect(bad[0]?.remedy).toBeTruthy();
    }
  });

  it("node where gates cannot see it (nvm) is optional missing (exit 1)", () => {
    const f = { ...healthy(), gatePrograms: { ...healthy().gatePrograms, node: null } };
    expect(report(f).exit).toBe(1);
    expect(byId(f, "node for gates")?.remedy).toContain("system-wide");
  });

  it("python3 absent is optional missing (exit 1)", () => {
    const f = { ...healthy(), gatePrograms: { ...healthy().gatePrograms, python3: null } };
    const r = report(f);
    expect(r.exit).toBe(1);
    expect(r.verdict).toBe("optional_missing");
    expect(byId(f, "python3")?.remedy).toContain("python3");
  });

  it("a configured provider is checked: a blank key or a base URL that is no URL is optional missing", () => {
    expect(report({ ...healthy(), env: { ANTHROPIC_API_KEY: "sk-ant-xyz" } }).exit).toBe(0);
    expect(report({ ...healthy(), env: { ANTHROPIC_API_KEY: "  " } }).exit).toBe(1);
    expect(report({ ...healthy(), env: { OPENAI_API_KEY: "sk x" } }).exit).toBe(1);
    expect(
      report({ ...healthy(), env: { LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:11434/v1" } })
        .exit,
    ).toBe(0);
    expect(
      report({ ...healthy(), env: { LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: "localhost:11434" } }).exit,
    ).toBe(1);
    // The key's value is never printed.
    expect(
      JSON.stringify(report({ ...healthy(), env: { ANTHROPIC_API_KEY: "sk-ant-secret-1" } })),
    ).not.toContain("sk-ant-secret-1");
  });

  it("claude on PATH is reported ok with how to mount it", () => {
    const f = { ...healthy(), programs: { ...healthy().programs, claude: "/usr/local/bin/claude" } };
    expect(byId(f, "claude")).toMatchObject({ state: "ok" });
    expect(byId(f, "claude")?.detail).toContain("--builder-mount");
  });

  it("reports the syscall filter: ok naming what it denies, or optional missing on an architecture without a table", () => {
    const on = {
      ...healthy(),
      seccomp: { available: true, detail: "denied with EPERM: ptrace, pidfd_getfd" },
    };
    expect(byId(on, "syscall filter")).toMatchObject({ state: "ok", need: "required" });
    expect(byId(on, "syscall filter")?.detail).toContain("ptrace");
    const off = { ...healthy(), seccomp: { available: false, detail: "no syscall table for riscv64" } };
    expect(byId(off, "syscall filter")).toMatchObject({ state: "missing", need: "optional" });
    expect(report(off).exit).toBe(1);
    expect(byId(healthy(), "syscall filter")).toBeUndefined();
  });
});

describe("loopgate doctor on a folder store's log", () => {
  const withLog = (log: DoctorFacts["store"]["log"]): DoctorFacts => ({
    ...healthy(),
    store: { ...healthy().store, log },
  });

  it("no events.db yet is skipped (exit 0); a sound one is ok (exit 0)", () => {
    expect(byId(withLog(null), "store-integrity")?.state).toBe("skipped");
    expect(report(withLog(null)).exit).toBe(0);
    const sound = withLog({ path: "/w/.loopgate/events.db", problems: [] });
    expect(byId(sound, "store-integrity")).toMatchObject({ state: "ok", need: "required" });
    expect(report(sound).exit).toBe(0);
  });

  it("a log with problems is required missing (exit 2), naming the file, the problems and the remedy", () => {
    const bad = withLog({
      path: "/w/.loopgate/events.db",
      problems: [
        "store /w/.loopgate/events.db: the event log is corrupted (SQLITE_NOTADB: file is not a database)",
      ],
    });
    const r = report(bad);
    expect(r.exit).toBe(2);
    const check = byId(bad, "store-integrity");
    expect(check).toMatchObject({ state: "missing", need: "required" });
    expect(check?.detail).toBe(
      "/w/.loopgate/events.db: 1 problem(s): store /w/.loopgate/events.db: the event log is corrupted (SQLITE_NOTADB: file is not a database)",
    );
    expect(check?.remedy).toContain("restore events.db from a backup");
    expect(formatDoctor(r)).toMatch(/✗ store-integrity\s+REQUIRED MISSING: \/w\/\.loopgate\/events\.db/);
  });

  it("shows at most five of SQLite's problem lines", () => {
    const many = withLog({ path: "/w/e.db", problems: ["p1", "p2", "p3", "p4", "p5", "p6", "p7"] });
    expect(byId(many, "store-integrity")?.detail).toBe("/w/e.db: 7 problem(s): p1; p2; p3; p4; p5; …");
  });
});
