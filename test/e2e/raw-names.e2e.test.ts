// A file name that is not UTF-8 (Latin-1 "café": the byte 0xE9 alone) as a user meets it through the
// CLI: the task's file and the builder's reach the gate byte for byte, and a finding on such a name
// reads `\udce9` in the JSON envelope and on the terminal alike (path-bytes.ts).
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Envelope, loopgate, parseStdout, removeTemps, show, tempDir, writeTask } from "./cli.js";

afterAll(removeTemps);

const check = [
  "import os, sys",
  "ok = b'caf\\\\xe9.txt' in os.listdir(b'.') and open(b'caf\\\\xe9.txt', 'rb').read() == b'bonjour'",
  "ok = ok and open(b'lib/r\\\\xe9sultat', 'rb').read() == b'42'",
  "ok = ok and open(b'test/\\\\xe9.txt', 'rb').read() == b'pristine'",
  "sys.exit(0 if ok else 1)",
].join("; ");

const yaml = `id: raw-names-cli
prompt: Write 42 into the Latin-1 file lib/r\\u00e9sultat.
workspace: ./repo
deliverables: ["lib/**"]
protected: ["test/**"]
gates:
  - id: bytes
    run: ["/usr/bin/python3", "-c", "${check.replace(/"/g, '\\"')}"]
    timeout: 60s
budget: { attempts: 1 }
`;

/** A task whose workspace holds Latin-1 names (written with Buffer paths) and a builder script. */
function task(builderPython: string): { file: string; builder: string } {
  const file = writeTask(yaml);
  const repo = Buffer.from(join(dirname(file), "repo"));
  const at = (...parts: (string | number[])[]) =>
    Buffer.concat([repo, Buffer.from("/"), ...parts.map((p) => Buffer.from(p as string))]);
  writeFileSync(at("caf", [0xe9], ".txt"), "bonjour");
  mkdirSync(at("lib"));
  mkdirSync(at("test"));
  writeFileSync(at("test/", [0xe9], ".txt"), "pristine");
  const builder = join(tempDir(), "builder.sh");
  writeFileSync(builder, `#!/bin/sh\nexec python3 -c "${builderPython}"\n`);
  chmodSync(builder, 0o755);
  return { file, builder };
}

describe("names that are not UTF-8, through bin/loopgate.js", () => {
  it("the task's and the builder's Latin-1 files reach the gate: SUCCESS", async () => {
    const t = task("open(b'lib/r\\xe9sultat', 'w').write('42')");
    const r = await loopgate(["run", t.file, "--builder", t.builder, "--store", tempDir(), "--json"]);
    expect(r.code, show(r)).toBe(0);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("SUCCESS");
  });

  it("the same gate fails when the builder's Latin-1 file says 41: it checks the bytes", async () => {
    const t = task("open(b'lib/r\\xe9sultat', 'w').write('41')");
    const r = await loopgate(["run", t.file, "--builder", t.builder, "--store", tempDir(), "--json"]);
    expect(r.code, show(r)).toBe(1);
    expect(parseStdout<Envelope>(r).gates.map((g) => [g.id, g.passed])).toEqual([["bytes", false]]);
  });

  it("a protected Latin-1 name the builder edits is a blocking finding, shown as \\udce9 in JSON and on the terminal", async () => {
    const edit = "open(b'lib/r\\xe9sultat', 'w').write('42'); open(b'test/\\xe9.txt', 'w').write('forged')";
    const t = task(edit);
    const store = tempDir();
    const json = await loopgate(["run", t.file, "--builder", t.builder, "--store", store, "--json"]);
    expect(json.code, show(json)).toBe(1);
    expect(json.stdout).toContain('"test/\\udce9.txt"');
    const env = parseStdout<Envelope>(json);
    const f = env.findings.find((x) => x.code === "protected_path_modified");
    expect(f?.path).toBe("test/\uDCE9.txt");
    // The gate ran on the restored pristine bytes and passed; SUCCESS is refused by the finding alone.
    expect(env.gates.map((g) => [g.id, g.passed])).toEqual([["bytes", true]]);
    const human = await loopgate(["run", t.file, "--builder", t.builder, "--store", store]);
    expect(human.code, show(human)).toBe(1);
    expect(human.stdout + human.stderr).toContain("test/\\udce9.txt");
    expect(human.stdout + human.stderr).not.toContain("\uFFFD");
  });
});
