import { lstatSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { keptFiles } from "../support/run-tree.js";
import { makeTask } from "./task-fixture.js";

// The gate fails if its environment holds anything privileged: so a passing gate proves the gate environment kept no bit.
const taskYaml = `id: host-safety
prompt: Make lib/answer.sh print 42.
workspace: ./repo
deliverables: ["lib/**"]
gates:
  - id: answer
    run: ["sh", "-c", "test -z \\"$(find . -perm /7000)\\" && [ \\"$(sh lib/answer.sh)\\" = 42 ]"]
    timeout: 20s
budget: { attempts: 1 }
`;

/** Every path under `dir` (by raw name bytes, never following symlinks) whose mode has a set-uid, set-gid or sticky bit. */
function privileged(dir: string | Buffer): string[] {
  const out: string[] = [];
  const base = Buffer.from(dir);
  for (const name of readdirSync(base, { encoding: "buffer" })) {
    const p = Buffer.concat([base, Buffer.from("/"), name]);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) continue;
    if (st.mode & 0o7000) out.push(`${p.toString()} ${(st.mode & 0o7777).toString(8)}`);
    if (st.isDirectory()) out.push(...privileged(p));
  }
  return out;
}

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-host-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

describe("what loopgate keeps cannot hurt the host", () => {
  it("a builder that plants a set-uid copy of python3: blocking finding, and nothing privileged is left under the run folder", async () => {
    const t = await makeTask({ taskYaml, repo: { "lib/answer.sh": "echo 41\n" } });
    const builder = commandBuilder(
      "sh -c 'cp /usr/bin/python3 lib/.helper && chmod 4755 lib/.helper && mkdir lib/drop && chmod 1777 lib/drop && echo x > lib/g && chmod 2755 lib/g && chmod 3777 . && echo \"echo 42\" > lib/answer.sh'",
    );
    const env = await runTask({ loaded: loadTask(t.file), builder, store, localDir, sandbox: "bubblewrap" });
    const found = env.findings.filter((f) => f.code === "privileged_mode_bit");
    expect(found.map((f) => [f.path, f.severity]).sort()).toEqual([
      ["lib/.helper", "blocking"],
      ["lib/drop", "blocking"],
      ["lib/g", "blocking"],
    ]);
    expect(env.status).toBe("ESCALATED");
    // The gate's environment held no privileged bit (its own check), and it saw the fix.
    expect(env.gates.map((g) => [g.id, g.passed])).toEqual([["answer", true]]);
    const runDir = join(localDir, "runs", env.run_id);
    // The builder really did set the bit (the finding is from the observation) and nothing of it is left.
    expect(privileged(runDir)).toEqual([]);
    expect(lstatSync(join(keptFiles(runDir), "lib/.helper")).mode & 0o7777).toBe(0o755);
    expect(lstatSync(runDir).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(localDir, "runs")).mode & 0o777).toBe(0o700);
    await rm(t.dir, { recursive: true, force: true });
  });

  // Was: the name was an unsupported_entry. It is a name like any other now: the set-uid bit is the finding.
  it("a set-uid file whose name is not valid UTF-8 is cleared too (addressed by its raw bytes)", async () => {
    const t = await makeTask({ taskYaml, repo: { "lib/answer.sh": "echo 41\n" } });
    const builder = commandBuilder(
      `python3 -c "import os; p = b'lib/\\xff.bin'; open(p, 'w').write('x'); os.chmod(p, 0o4755)"`,
    );
    const env = await runTask({ loaded: loadTask(t.file), builder, store, localDir, sandbox: "bubblewrap" });
    expect(env.status).toBe("ESCALATED");
    expect(env.findings.map((f) => [f.code, f.severity, f.path])).toContainEqual([
      "privileged_mode_bit",
      "blocking",
      "lib/\uDCFF.bin",
    ]);
    expect(env.findings.some((f) => f.code === "unsupported_entry")).toBe(false);
    const ws = Buffer.from(join(keptFiles(join(localDir, "runs", env.run_id)), "lib"));
    const names = readdirSync(ws, { encoding: "buffer" });
    const odd = names.find((n) => n.includes(0xff));
    expect(odd).toBeDefined();
    const st = lstatSync(Buffer.concat([ws, Buffer.from("/"), odd as Buffer]));
    expect(st.mode & 0o7777).toBe(0o755);
    expect(privileged(join(localDir, "runs", env.run_id))).toEqual([]);
    await rm(t.dir, { recursive: true, force: true });
  });

  it("a gate that plants a set-uid binary at the bottom of a tree deeper than PATH_MAX leaves nothing on the host, and is not blamed on cleanup", async () => {
    // The gate itself (code under test, as far as loopgate knows) builds the tree in its writable
    // environment and passes; Node's own rm cannot remove such a tree.
    const deepYaml = `id: deep-gate
prompt: Make lib/answer.sh print 42.
workspace: ./repo
deliverables: ["lib/**"]
protected: ["mk.py"]
gates:
  - id: answer
    run: ["python3", "mk.py"]
    writable: true
    timeout: 60s
budget: { attempts: 1 }
`;
    const mk = [
      "import os, shutil",
      "for i in range(120):",
      "    n = 'level-%d-' % i + 'd' * 40",
      "    os.mkdir(n)",
      "    os.chdir(n)",
      "shutil.copy('/usr/bin/true', 'helper')",
      "os.chmod('helper', 0o4755)",
      "",
    ].join("\n");
    const t = await makeTask({ taskYaml: deepYaml, repo: { "lib/answer.sh": "echo 41\n", "mk.py": mk } });
    const builder = commandBuilder("sh -c 'echo \"echo 42\" > lib/answer.sh'");
    const env = await runTask({ loaded: loadTask(t.file), builder, store, localDir, sandbox: "bubblewrap" });
    expect(env.status, env.reason).toBe("SUCCESS");
    const runDir = join(localDir, "runs", env.run_id);
    expect(readdirSync(join(runDir, "gate-env"))).toEqual([]);
    expect(privileged(runDir)).toEqual([]);
    await rm(t.dir, { recursive: true, force: true });
  });
});
