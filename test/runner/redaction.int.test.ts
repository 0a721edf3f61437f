import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { runTree } from "../support/run-tree.js";
import { makeTask } from "./task-fixture.js";

// A --builder-env value (the builder reads it from its environment) and a provider key loopgate holds
// (never passed to the builder: the builder's script carries it, as a leaked key would be carried).
const BUILDER_KEY = "lg-Secret/Value+42&z9";
const PROVIDER_KEY = "sk-ant-fake-0123456789abcdef";

function encodings(v: string): Record<string, string> {
  const b = Buffer.from(v, "utf8");
  return {
    plain: v,
    base64: b.toString("base64"),
    base64_unpadded: b.toString("base64").replace(/=+$/, ""),
    base64url: b.toString("base64url"),
    hex: b.toString("hex"),
    HEX: b.toString("hex").toUpperCase(),
    url: encodeURIComponent(v),
    reversed: [...v].reverse().join(""),
  };
}

// Prints every encoding of both keys, on stdout (output excerpt, claim) and into a deliverable the gate prints.
const leak = `import base64, os, urllib.parse
keys = [os.environ["LG_BUILDER_KEY"], "${PROVIDER_KEY}"]
lines = []
for k in keys:
    b = k.encode()
    lines += [k, base64.b64encode(b).decode(), base64.b64encode(b).decode().rstrip("="),
              base64.urlsafe_b64encode(b).decode(), b.hex(), b.hex().upper(),
              urllib.parse.quote(k, safe=""), k[::-1]]
os.makedirs("lib", exist_ok=True)
open("lib/leak.txt", "w").write("\\n".join(lines) + "\\n")
print("\\n".join(lines))
print("All done, key " + keys[0] + " and " + keys[1])
`;

const taskYaml = `id: redaction
prompt: Print nothing secret.
workspace: ./repo
deliverables: ["lib/**"]
gates:
  - id: shows-log
    run: ["sh", "-c", "cat lib/leak.txt; exit 1"]
    timeout: 20s
    feedback: log
budget: { attempts: 2 }
`;

let localDir: string;
let store: SqliteEventStore;
const saved = process.env.LG_BUILDER_KEY;
const savedProvider = process.env.ANTHROPIC_API_KEY;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-redact-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
  process.env.LG_BUILDER_KEY = BUILDER_KEY;
  process.env.ANTHROPIC_API_KEY = PROVIDER_KEY;
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
  if (saved === undefined) delete process.env.LG_BUILDER_KEY;
  else process.env.LG_BUILDER_KEY = saved;
  if (savedProvider === undefined) delete process.env.ANTHROPIC_API_KEY;
  else process.env.ANTHROPIC_API_KEY = savedProvider;
});

describe("secrets are redacted from everything recorded", () => {
  it("a builder that prints a key plainly, base64, hex, URL-encoded and reversed: no encoding is in the store, the prompt files or the envelope", async () => {
    const t = await makeTask({ taskYaml, repo: { "README.md": "x\n" }, scripts: { "leak.py": leak } });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(`python3 ${t.script("leak.py")}`),
      store,
      localDir,
      sandbox: "bubblewrap",
      allowEnv: ["LG_BUILDER_KEY"],
    });
    const runDir = join(localDir, "runs", env.run_id);
    // The builder really printed them: its own file holds the key, and the gate log went into a required fix.
    expect(readFileSync(join(await runTree(localDir, env.run_id), "lib", "leak.txt"), "utf8")).toContain(
      BUILDER_KEY,
    );
    expect(env.attempts).toBe(2);
    const envelope = JSON.stringify(env);
    expect(envelope).toContain("[redacted:LG_BUILDER_KEY]");
    expect(envelope).toContain("[redacted:ANTHROPIC_API_KEY]");

    const storeBytes = readdirSync(localDir)
      .filter((f) => f.startsWith("events.db"))
      .map((f) => readFileSync(join(localDir, f)));
    const prompts = readdirSync(runDir)
      .filter((d) => d.startsWith("prompt-"))
      .map((d) => readFileSync(join(runDir, d, "prompt.md")));
    expect(prompts.length).toBe(2);
    expect(prompts.map((p) => p.toString()).join("")).toContain("[redacted:LG_BUILDER_KEY]");
    const haystacks: [string, Buffer][] = [
      ...storeBytes.map((b, i) => [`store file ${i}`, b] as [string, Buffer]),
      ...prompts.map((b, i) => [`prompt ${i}`, b] as [string, Buffer]),
      ["envelope", Buffer.from(envelope)],
    ];
    const leaks: string[] = [];
    for (const [name, key] of [
      ["LG_BUILDER_KEY", BUILDER_KEY],
      ["ANTHROPIC_API_KEY", PROVIDER_KEY],
    ] as const)
      for (const [how, text] of Object.entries(encodings(key)))
        for (const [where, bytes] of haystacks)
          if (bytes.includes(text)) leaks.push(`${name} ${how} in ${where}`);
    expect(leaks).toEqual([]);
    await rm(t.dir, { recursive: true, force: true });
  });
});
