import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder, noopBuilder } from "../../src/builders/command-builder.js";
import { runPaths } from "../../src/runner/run/context/run-context.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { runTree } from "../support/run-tree.js";
import { makeTask } from "./task-fixture.js";

// File names that are not UTF-8 (a Latin-1 "café": 0xE9 alone) travel like any name: from the task's
// workspace and from the builder, into the gate environment, byte for byte, judged by the same globs.
// Each gate is a real python3 in bubblewrap that looks for the exact bytes with os.listdir(b'.').

const taskYaml = `id: raw-names
prompt: Write 42 into lib/r\\u00e9sultat (the Latin-1 name the checker wants).
workspace: ./repo
deliverables: ["lib/**"]
protected: ["test/**"]
gates:
  - id: bytes
    run: ["/usr/bin/python3", "hidden/check.py"]
    heldout: ./heldout
    timeout: 30s
    feedback: log
budget: { attempts: 1 }
`;

/** The held-out checker: what it asserts about raw names is printed, and any failure exits 1. */
const check = `import os, sys
top = os.listdir(b'.')
lib = os.listdir(b'lib')
test = os.listdir(b'test')
print('top', sorted(top), 'lib', sorted(lib), 'test', sorted(test))
ok = b'caf\\xe9.txt' in top and open(b'caf\\xe9.txt', 'rb').read() == b'bonjour\\n'
ok = ok and open(b'test/\\xe9t\\xe9.txt', 'rb').read() == b'pristine\\n'
want = os.environ.get('WANT_RESULT', '1')
ok = ok and (b'r\\xe9sultat' in lib) and open(b'lib/r\\xe9sultat', 'rb').read() == b'42\\n'
sys.exit(0 if ok else 1)
`;

/** Writes the task, then the Latin-1 names of its workspace with Buffer paths (a string cannot name them). */
async function latin1Task() {
  const t = await makeTask({
    taskYaml,
    repo: { "lib/answer.sh": "echo 41\n", "test/keep.txt": "k\n" },
    heldout: { "hidden/check.py": check },
  });
  const repo = Buffer.from(join(t.dir, "repo"));
  const at = (...parts: (string | number[])[]) =>
    Buffer.concat([repo, Buffer.from("/"), ...parts.map((p) => Buffer.from(p as string))]);
  writeFileSync(at("caf", [0xe9], ".txt"), "bonjour\n");
  writeFileSync(at("test/", [0xe9], "t", [0xe9], ".txt"), "pristine\n");
  return t;
}

let localDir: string;
let store: SqliteEventStore;
const dirs: string[] = [];
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-raw-names-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  for (const d of [localDir, ...dirs]) await rm(d, { recursive: true, force: true });
});

async function run(builderCmd: string | null) {
  const t = await latin1Task();
  dirs.push(t.dir);
  const builder = builderCmd ? commandBuilder(builderCmd) : noopBuilder();
  const env = await runTask({ loaded: loadTask(t.file), builder, store, localDir, sandbox: "bubblewrap" });
  const events = await store.readStream(RunJournal.stream(env.run_id));
  return { env, events };
}

const writeResult = `python3 -c "open(b'lib/r\\xe9sultat', 'w').write('42\\n')"`;

describe("a name that is not UTF-8 is a name", () => {
  it("the task's Latin-1 file reaches the gate byte-exact, and the builder's Latin-1 deliverable is carried: SUCCESS", async () => {
    const { env, events } = await run(writeResult);
    expect(env.status, `${env.reason}\n${env.gates.map((g) => g.log_excerpt).join("\n")}`).toBe("SUCCESS");
    expect(env.gates.map((g) => [g.id, g.passed])).toEqual([["bytes", true]]);
    expect(env.findings.filter((f) => f.severity === "blocking")).toEqual([]);
    // The change is recorded under its encoded path: 0xE9 as U+DCE9, which JSON writes `\udce9`.
    const changed = events.find((e) => e.type === "workspace_changed");
    expect(changed?.type === "workspace_changed" && changed.data.added.paths).toEqual(["lib/r\uDCE9sultat"]);
    expect(JSON.stringify(changed?.data)).toContain("lib/r\\udce9sultat");
    // Pristine and the builder's workspace hold the task's file under its own bytes.
    const runDir = join(localDir, "runs", env.run_id);
    for (const tree of [runPaths(runDir).pristineDir, await runTree(localDir, env.run_id)]) {
      const names = readdirSync(Buffer.from(tree), {
        encoding: "buffer",
      });
      expect(names.some((n) => n.equals(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74])))).toBe(
        true,
      );
    }
  });

  it("without the builder's file the same gate fails: it really checks the bytes", async () => {
    const { env } = await run(null);
    expect(env.status).toBe("ESCALATED");
    expect(env.gates.map((g) => [g.id, g.passed])).toEqual([["bytes", false]]);
    // The checker saw the task's Latin-1 file: its listing is in the log (Python shows the byte as \\xe9).
    expect(env.gates[0]?.log_excerpt).toContain("b'caf\\xe9.txt'");
  });

  it("a builder that edits a protected Latin-1 name is blocked like any protected change, and the gate sees the pristine file", async () => {
    const edit = `python3 -c "open(b'test/\\xe9t\\xe9.txt', 'w').write('forged\\n'); open(b'lib/r\\xe9sultat', 'w').write('42\\n')"`;
    const { env } = await run(edit);
    expect(env.status).toBe("ESCALATED");
    expect(env.findings.map((f) => [f.code, f.severity, f.path])).toContainEqual([
      "protected_path_modified",
      "blocking",
      "test/\uDCE9t\uDCE9.txt",
    ]);
    expect(env.findings.some((f) => f.code === "unsupported_entry")).toBe(false);
    // The gate ran on the restored pristine file (its check of the protected bytes passed).
    expect(env.gates.map((g) => [g.id, g.passed])).toEqual([["bytes", true]]);
  });

  it("the builder's workspace starts with the task's Latin-1 file (it was copied, not dropped)", async () => {
    const look = `sh -c 'python3 -c "import os; open(\\"lib/r\\\\xe9sultat\\".encode(\\"latin-1\\"), \\"w\\").write(\\"42\\\\n\\" if b\\"caf\\\\xe9.txt\\" in os.listdir(b\\".\\") else \\"missing\\\\n\\")"'`;
    const { env } = await run(look);
    expect(env.status, env.gates.map((g) => g.log_excerpt).join("\n")).toBe("SUCCESS");
    const ws = Buffer.from(join(await runTree(localDir, env.run_id), "lib"));
    const file = Buffer.concat([ws, Buffer.from("/r"), Buffer.from([0xe9]), Buffer.from("sultat")]);
    expect(readFileSync(file, "utf8")).toBe("42\n");
  });
});
