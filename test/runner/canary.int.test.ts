import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "./task-fixture.js";

// A gate with a canary runs twice: once as declared, once with held-out tests that must fail. Code that
// disables the test framework makes the canary pass, and the gate is then not passed.
const taskYaml = `id: canary
prompt: Make lib/answer.js export 42.
workspace: ./repo
deliverables: ["lib/**"]
gates:
  - id: hidden
    run: ["node", "--test", "hidden/"]
    heldout: ./heldout
    canary: ./canary
    timeout: 20s
budget: { attempts: 1 }
`;
const imports =
  'import assert from "node:assert/strict";\nimport { test } from "node:test";\nimport { answer } from "../lib/answer.js";\n';
const repo = { "lib/answer.js": "export const answer = 41;\n", "package.json": '{ "type": "module" }\n' };
const heldout = { "hidden/answer.test.js": `${imports}test("answer", () => assert.equal(answer, 42));\n` };
const canary = { "hidden/zz-canary.test.js": `${imports}test("canary", () => assert.equal(answer, -1));\n` };

const honest = "#!/bin/sh\necho 'export const answer = 42;' > lib/answer.js\n";
const tamper = `#!/bin/sh
cat > lib/answer.js <<'EOF2'
import assert from "node:assert/strict";
assert.equal = () => {};
export const answer = 41;
EOF2
`;

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-canary-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

async function run(script: string, yaml = taskYaml) {
  const t = await makeTask({ taskYaml: yaml, repo, heldout: { ...heldout }, scripts: { "b.sh": script } });
  const { mkdir, writeFile } = await import("node:fs/promises");
  for (const [p, text] of Object.entries(canary)) {
    await mkdir(join(t.dir, "canary", "hidden"), { recursive: true });
    await writeFile(join(t.dir, "canary", p), text);
  }
  return runTask({
    loaded: loadTask(t.file),
    builder: commandBuilder(t.script("b.sh")),
    store,
    localDir,
    sandbox: "bubblewrap",
  });
}

describe("gate canaries", () => {
  it("an honest fix passes: the canary fails as it must", async () => {
    const env = await run(honest);
    expect(env.status).toBe("SUCCESS");
  });

  it("code that disables assert passes the tests but not the canary: not passed, error tampered", async () => {
    const env = await run(tamper);
    expect(env.status).toBe("ESCALATED");
    expect(env.gates[0]).toMatchObject({ id: "hidden", passed: false, error: "tampered" });
    expect(env.reason).toContain("gate hidden failed (tampered)");
  });

  it("the canary folder is hidden from the builder like any held-out folder", async () => {
    const t = await makeTask({ taskYaml, repo, heldout });
    await (await import("node:fs/promises")).mkdir(join(t.dir, "canary"));
    expect(loadTask(t.file).hidden).toContain(join(t.dir, "canary"));
  });
});

// Class 2 of the integrity issue: code under test that can tell the canary run from the real run tampers
// only in the real one. Both runs happen in the same folder, and the real run holds inert files where the
// canary's go, so the listing (names, count, sizes) is the same. loopgate's own canary is turned off here
// so that only the declared canary is tested.
const declaredOnly = taskYaml.replace("    timeout: 20s", "    timeout: 20s\n    tamper_check: off");
const sniffer = (condition: string) => `#!/bin/sh
cat > lib/answer.js <<'EOF2'
import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
const names = readdirSync("hidden").sort();
const sizes = names.map((n) => statSync("hidden/" + n).size).join(",");
const cwd = process.cwd();
if (${condition}) assert.equal = () => {};
export const answer = 41;
EOF2
`;

describe("the declared canary run cannot be told from the real run", () => {
  it.each([
    ["the folder name", '!cwd.endsWith("-canary")'],
    ["the number of held-out test files", "names.length === 1"],
    ["the held-out file names", '!names.some((n) => n.includes("canary"))'],
    ["the held-out file sizes", `sizes === "${Buffer.byteLength(heldout["hidden/answer.test.js"])}"`],
  ])(
    "code under test that tampers only when it sees %s of the real run never reaches SUCCESS",
    async (_what, condition) => {
      const env = await run(sniffer(condition), declaredOnly);
      expect(env.status).toBe("ESCALATED");
      expect(env.gates[0]?.passed).toBe(false);
    },
  );

  it("the padded real run still passes honest work (the inert stand-ins hold no tests)", async () => {
    const env = await run(honest, declaredOnly);
    expect(env.status).toBe("SUCCESS");
  });
});
