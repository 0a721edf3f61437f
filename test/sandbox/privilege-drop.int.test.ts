// As root, nothing sandboxed runs as root: builders, gates and agent tools run as the sandbox user, with no
// groups and no capabilities, and still reach folders only root may enter (a 0700 run folder, /root).
import {
  chmodSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { runSandboxed, type SandboxMode, type SandboxSpec } from "../../src/sandbox/bubblewrap.js";
import { scrubbedEnv } from "../../src/sandbox/environment.js";
import { accountName, DEFAULT_SANDBOX_ID } from "../../src/sandbox/sandbox-user.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { removeTree } from "../../src/workspace/remove-tree.js";
import { makeTask } from "../runner/task-fixture.js";

const isRoot = process.geteuid?.() === 0;
if (!isRoot) console.log("privilege-drop tests skipped: they need loopgate to run as root (euid 0)");

/** The uid/gid the tests expect, read independently of loopgate's own resolution. */
const expectedUid = Number(process.env.LOOPGATE_SANDBOX_UID || DEFAULT_SANDBOX_ID);
const expectedGid = Number(process.env.LOOPGATE_SANDBOX_GID || DEFAULT_SANDBOX_ID);

let root: string;
beforeAll(() => {
  // Under root's home when there is one: a 0700 folder the sandbox user can neither list nor enter.
  const base = isRoot && statSync(homedir(), { throwIfNoEntry: false })?.isDirectory() ? homedir() : tmpdir();
  root = mkdtempSync(join(base, "loopgate-privdrop-"));
  chmodSync(root, 0o700);
});
afterAll(async () => {
  await removeTree(root);
});

function dir(name: string): string {
  const d = join(root, name);
  mkdirSync(d, { recursive: true, mode: 0o700 });
  return d;
}

function box(script: string, over: Partial<SandboxSpec> = {}, mode: SandboxMode = "bubblewrap") {
  const ws = over.cwd ?? dir(`ws-${Math.random().toString(36).slice(2)}`);
  return runSandboxed(
    {
      argv: ["/bin/sh", "-c", script],
      cwd: ws,
      writable: [ws],
      readonly: [],
      env: scrubbedEnv({ home: "/tmp" }),
      network: false,
      timeoutMs: 60_000,
      ...over,
    },
    mode,
  );
}

/** The value of a `Name:\tvalue` line of /proc/self/status as printed by the sandboxed shell. */
const statusField = (out: string, name: string) =>
  new RegExp(`^${name}:[ \\t]*(.*)$`, "m").exec(out)?.[1]?.trim() ?? null;

describe.skipIf(!isRoot)("privilege drop (loopgate as root)", () => {
  it("the sandboxed process is the sandbox user, with no groups, no capabilities, no_new_privs", async () => {
    const r = await box("cat /proc/self/status");
    expect(r.exitCode, r.output).toBe(0);
    // Real, effective, saved and filesystem ids.
    expect(statusField(r.output, "Uid")?.split(/\s+/)).toEqual(Array(4).fill(String(expectedUid)));
    expect(statusField(r.output, "Gid")?.split(/\s+/)).toEqual(Array(4).fill(String(expectedGid)));
    expect(statusField(r.output, "Groups")).toBe("");
    for (const cap of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"])
      expect(BigInt(`0x${statusField(r.output, cap)}`), cap).toBe(0n);
    expect(statusField(r.output, "NoNewPrivs")).toBe("1");
  });

  it("--unsafe-no-sandbox (mode none) isolates nothing, as documented: the process runs as loopgate does", async () => {
    const r = await box("id -u", {}, "none" satisfies SandboxMode);
    expect(r.output.trim()).toBe(String(process.geteuid?.()));
  });

  it("PID 1 holds PWD exactly as the spec has it: absent when absent, its value when given", async () => {
    const pid1 = "tr '\\0' '\\n' < /proc/1/environ | grep '^PWD=' || echo no-PWD";
    const without = await box(pid1);
    expect(without.output.trim()).toBe("no-PWD");
    const given = await box(pid1, { env: { ...scrubbedEnv({ home: "/tmp" }), PWD: "/spec/pwd value" } });
    expect(given.output.trim()).toBe("PWD=/spec/pwd value");
  });

  it("refuses an environment holding a name the stage script uses for itself", () => {
    // Refused before anything starts, as runSandboxed refuses what it cannot run (no bwrap, say).
    expect(() => box("true", { env: { ...scrubbedEnv({ home: "/tmp" }), lg_stage: "x" } })).toThrow(
      /lg_stage, a name loopgate's privilege drop uses/,
    );
  });

  it("doctor's account name comes from passwd", () => {
    const passwd = join(dir("passwd"), "passwd");
    writeFileSync(passwd, "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/usr/sbin/nologin\n");
    expect(accountName(65534, passwd)).toBe("nobody");
    expect(accountName(4242, passwd)).toBeNull();
  });

  it("cannot read /etc/shadow, even when a task shows it through `etc`", async () => {
    const r = await box("cat /etc/shadow && echo READ-SHADOW; echo end", { etc: ["shadow"] });
    expect(r.output).toContain("end");
    expect(r.output).not.toContain("READ-SHADOW");
    expect(r.output).not.toMatch(/^root:/m);
  });

  it("a file it makes set-uid is owned by the sandbox user on the host, so it is never set-uid root", async () => {
    const ws = dir("setuid");
    const r = await box("cp /bin/sh ./sh && chmod 4755 ./sh; chmod u+s ./sh; ls -ln ./sh", {
      cwd: ws,
      writable: [ws],
    });
    expect(r.exitCode, r.output).toBe(0);
    const st = statSync(join(ws, "sh"));
    expect(st.uid).toBe(expectedUid);
    expect(st.uid).not.toBe(0);
  });

  it("cannot write root-owned files: the system, a read-only mount, a hard link loopgate shares", async () => {
    const ws = dir("ws-links");
    const pristine = dir("pristine");
    const ro = dir("ro");
    chmodSync(ro, 0o755);
    writeFileSync(join(ro, "config"), "original\n", { mode: 0o666 });
    chmodSync(join(ro, "config"), 0o666);
    // A file of the workspace that shares its inode with a pristine copy, mode 0666: handing the
    // workspace over must neither give that inode away nor leave it writable by others.
    writeFileSync(join(pristine, "shared.txt"), "pristine\n");
    chmodSync(join(pristine, "shared.txt"), 0o666);
    linkSync(join(pristine, "shared.txt"), join(ws, "shared.txt"));
    writeFileSync(join(ws, "own.txt"), "loopgate wrote this\n");
    const r = await box(
      [
        `echo x >> /usr/bin/env 2>/dev/null && echo WROTE-USR`,
        `echo x >> ${ro}/config 2>/dev/null && echo WROTE-RO`,
        "echo x >> shared.txt 2>/dev/null && echo WROTE-SHARED",
        "echo edited >> own.txt && echo EDITED-OWN",
        "echo new > new.txt && echo MADE-NEW",
      ].join("; "),
      { cwd: ws, writable: [ws], readonly: [ro] },
    );
    expect(r.output).not.toMatch(/WROTE-/);
    expect(r.output).toContain("EDITED-OWN");
    expect(r.output).toContain("MADE-NEW");
    expect(readFileSync(join(pristine, "shared.txt"), "utf8")).toBe("pristine\n");
    const shared = statSync(join(pristine, "shared.txt"));
    expect(shared.uid).toBe(0);
    expect(shared.mode & 0o002).toBe(0);
    expect(readFileSync(join(ro, "config"), "utf8")).toBe("original\n");
    expect(statSync(join(ws, "new.txt")).uid).toBe(expectedUid);
  });

  it("reads a read-only folder only root may enter (mode 0700), without loopgate changing its mode", async () => {
    const closed = dir("closed");
    writeFileSync(join(closed, "input.txt"), "visible\n");
    const r = await box(`cat ${closed}/input.txt; echo x > ${closed}/w 2>/dev/null && echo WROTE`, {
      readonly: [closed],
    });
    expect(r.output).toContain("visible");
    expect(r.output).not.toContain("WROTE");
    expect(statSync(closed).mode & 0o777).toBe(0o700);
    expect(statSync(closed).uid).toBe(0);
  });

  it("folders alone are bound onto the stage's own mount points, a file through a fresh tmpfs; the host's stage stays empty", async () => {
    const open = dir("open-ro");
    chmodSync(open, 0o755);
    writeFileSync(join(open, "data.txt"), "open folder\n", { mode: 0o644 });
    const file = join(dir("file-parent"), "single.txt");
    writeFileSync(file, "single file\n", { mode: 0o644 });
    // Folders only: the workspace (writable) and an open read-only folder.
    const folders = await box(`cat ${open}/data.txt; echo w > out.txt && echo WROTE-WS`, {
      readonly: [open],
    });
    expect(folders.exitCode, folders.output).toBe(0);
    expect(folders.output).toContain("open folder");
    expect(folders.output).toContain("WROTE-WS");
    // A file among the sources: the stage is a fresh tmpfs with a file to bind onto.
    const withFile = await box(`cat ${file}; cat ${open}/data.txt`, { readonly: [file, open] });
    expect(withFile.exitCode, withFile.output).toBe(0);
    expect(withFile.output).toContain("single file");
    expect(withFile.output).toContain("open folder");
    // Nothing of either is mounted on the host; the shared stage holds empty folders only, 0711.
    expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain("loopgate-stage");
    const stage = "/run/loopgate-stage";
    if (statSync(stage, { throwIfNoEntry: false })) {
      expect(statSync(stage).mode & 0o777).toBe(0o711);
      expect(statSync(stage).uid).toBe(0);
      for (const name of readdirSync(stage)) {
        expect(statSync(join(stage, name)).isDirectory()).toBe(true);
        expect(readdirSync(join(stage, name))).toEqual([]);
      }
    }
  });

  it("limits.processes binds each sandbox alone, though all run as the same host user", async () => {
    const limits = { processes: 25, fileSize: 1024 * 1024 * 1024, memory: 4 * 1024 ** 3 };
    const a = dir("nproc-a");
    const b = dir("nproc-b");
    // A holds 15 processes until the test lets it go; B then starts 15 of its own. Counted together
    // (30+) they would pass 25; each sandbox alone stays under it.
    const holding = box(
      "for i in $(seq 15); do sleep 600 & done; touch holding; while [ ! -e release ]; do sleep 0.2; done; kill $(jobs -p); echo A-done",
      { cwd: a, writable: [a], limits },
    );
    let ended = false;
    void holding.then(() => {
      ended = true;
    });
    try {
      while (!ended && !statSync(join(a, "holding"), { throwIfNoEntry: false }))
        await new Promise((r) => setTimeout(r, 100));
      expect(ended, "sandbox A ended before it held its processes").toBe(false);
      const r = await box("for i in $(seq 15); do sleep 1 & done; wait && echo B-done", {
        cwd: b,
        writable: [b],
        limits,
      });
      expect(r.output).toContain("B-done");
      // And the limit still binds: 40 processes in one sandbox do not fit.
      const over = await box("for i in $(seq 40); do sleep 1 & done; wait; echo over-done", {
        cwd: b,
        writable: [b],
        limits,
      });
      expect(over.output).toMatch(/fork/i);
    } finally {
      writeFileSync(join(a, "release"), "");
      expect((await holding).output).toContain("A-done");
    }
  });

  it("a task under a 0700 folder runs end to end: the builder writes its workspace, the gates run", async () => {
    const localDir = dir("store");
    const store = SqliteEventStore.open(join(localDir, "events.db"));
    try {
      const t = await makeTask({
        taskYaml: `id: privdrop
prompt: Make lib/answer.sh print 42.
workspace: ./repo
deliverables: ["lib/**"]
gates:
  - id: answer
    run: ["sh", "-c", "test \\"$(sh lib/answer.sh)\\" = 42"]
    timeout: 30s
  - id: not-root
    run: ["sh", "-c", "test \\"$(id -u)\\" != 0"]
    timeout: 30s
budget: { attempts: 1 }
`,
        repo: { "lib/answer.sh": "echo 41\n" },
        scripts: { "fix.sh": "#!/bin/sh\n[ \"$(id -u)\" != 0 ] || exit 9\necho 'echo 42' > lib/answer.sh\n" },
      });
      const env = await runTask({
        loaded: loadTask(t.file),
        builder: commandBuilder(t.script("fix.sh")),
        store,
        localDir,
        sandbox: "bubblewrap",
      });
      expect(env.status, JSON.stringify(env.gates)).toBe("SUCCESS");
      expect(env.gates.map((g) => `${g.id}:${g.passed}`).sort()).toEqual(["answer:true", "not-root:true"]);
      await removeTree(t.dir);
    } finally {
      await store.close();
    }
  });
});
