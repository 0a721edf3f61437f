// `dependencies: [node_modules]` through the CLI as a user runs it: the envelope names each shared
// folder's digest, a second run reuses the store's one copy, and a real vitest gate runs from the
// read-only mount without `writable: true` (its cache goes to the sandbox's private layer).
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runPaths } from "../../src/runner/run/context/run-context.js";
import { type Envelope, loopgate, parseStdout, ROOT, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

type WithDeps = Envelope & { dependencies?: { path: string; digest: string; files: number }[] };

/** A task folder: repo/ with the given files, an executable oracle, and task.yaml. */
function taskFolder(yaml: string, files: Record<string, string>, oracle: string): string {
  const dir = tempDir("loopgate-e2e-deps-");
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(dir, "repo", p, ".."), { recursive: true });
    writeFileSync(join(dir, "repo", p), text);
  }
  writeFileSync(join(dir, "solution.sh"), oracle);
  chmodSync(join(dir, "solution.sh"), 0o755);
  writeFileSync(join(dir, "task.yaml"), yaml);
  return join(dir, "task.yaml");
}

const digestsIn = (store: string) =>
  existsSync(join(store, "dependencies"))
    ? readdirSync(join(store, "dependencies")).filter((n) => /^[0-9a-f]{64}$/.test(n))
    : [];

/** vitest and every package it needs (dependencies and optional native bindings), read from package.json files. */
function vitestClosure(): string[] {
  const seen = new Set<string>();
  const queue = ["vitest"];
  while (queue.length) {
    const name = queue.pop() ?? "";
    const manifest = join(ROOT, "node_modules", name, "package.json");
    if (seen.has(name) || !existsSync(manifest)) continue;
    seen.add(name);
    const pkg = JSON.parse(readFileSync(manifest, "utf8")) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    queue.push(...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {}));
  }
  return [...seen];
}

describe.concurrent("shared dependencies through the CLI", () => {
  it("an oracle run succeeds, names the digest, and a second run reuses the one copy", async () => {
    const file = taskFolder(
      [
        "id: deps-greet",
        "prompt: Make lib/app.js greet through the greet package.",
        "workspace: ./repo",
        'deliverables: ["lib/**"]',
        "dependencies:",
        "  - node_modules",
        "gates:",
        "  - id: unit",
        '    run: ["node", "check.js"]',
        "budget: { attempts: 1 }",
        "oracle: ./solution.sh",
        "",
      ].join("\n"),
      {
        "lib/app.js": "module.exports = () => 'no';\n",
        "check.js":
          "const out = require('./lib/app.js')('ada');\nif (out !== 'Hello, ada!') { console.log(out); process.exit(1); }\n",
        "node_modules/greet/index.js": "module.exports = (n) => `Hello, ${n}!`;\n",
        "node_modules/greet/package.json": '{ "name": "greet", "main": "index.js" }\n',
      },
      "#!/bin/sh\necho \"module.exports = (n) => require('greet')(n);\" > lib/app.js\n",
    );
    const store = tempDir();
    const first = await loopgate(["run", file, "--oracle", "--json", "--store", store]);
    expect(first.code, show(first)).toBe(0);
    const a = parseStdout<WithDeps>(first);
    expect(a.status).toBe("SUCCESS");
    const digests = digestsIn(store);
    expect(digests).toHaveLength(1);
    expect(a.dependencies).toEqual([{ path: "node_modules", digest: digests[0], files: 2 }]);
    expect(readdirSync(join(runPaths(join(store, "runs", a.run_id)).pristineDir, "node_modules"))).toEqual(
      [],
    );
    // The run's final tree, as `loopgate export` writes it whatever the run's layout.
    const tree = join(store, "exported");
    const exported = await loopgate(["export", a.run_id, tree, "--store", store]);
    expect(exported.code, show(exported)).toBe(0);
    expect(readdirSync(join(tree, "node_modules"))).toEqual([]);
    expect(readFileSync(join(tree, "lib/app.js"), "utf8")).toContain("require('greet')");
    const second = await loopgate(["run", file, "--oracle", "--json", "--store", store]);
    expect(second.code, show(second)).toBe(0);
    expect(parseStdout<WithDeps>(second).dependencies).toEqual(a.dependencies);
    expect(digestsIn(store)).toEqual(digests);
  });

  it("a vitest gate runs from the read-only mount without writable: true", async () => {
    const file = taskFolder(
      [
        "id: deps-vitest",
        "prompt: Make lib/sum.mjs export sum(a, b).",
        "workspace: ./repo",
        'deliverables: ["lib/**"]',
        'protected: ["test/**"]',
        "dependencies: [node_modules]",
        "gates:",
        "  - id: vitest",
        '    run: ["node", "node_modules/vitest/vitest.mjs", "run", "test/"]',
        "    timeout: 120s",
        "    feedback: log",
        "budget: { attempts: 1 }",
        "oracle: ./solution.sh",
        "",
      ].join("\n"),
      {
        "lib/sum.mjs": "export const sum = (a, b) => a - b;\n",
        "test/sum.test.mjs": [
          'import { expect, test } from "vitest";',
          'import { sum } from "../lib/sum.mjs";',
          'test("adds", () => expect(sum(2, 3)).toBe(5));',
          'test("adds negatives", () => expect(sum(-2, -3)).toBe(-5));',
          "",
        ].join("\n"),
      },
      '#!/bin/sh\necho "export const sum = (a, b) => a + b;" > lib/sum.mjs\n',
    );
    const nm = join(file, "..", "repo", "node_modules");
    for (const name of vitestClosure())
      cpSync(join(ROOT, "node_modules", name), join(nm, name), { recursive: true, verbatimSymlinks: true });
    const store = tempDir();
    const r = await loopgate(["run", file, "--oracle", "--json", "--store", store], { timeoutMs: 300_000 });
    const env = parseStdout<WithDeps>(r);
    expect(env.status, show(r)).toBe("SUCCESS");
    expect(env.gates.map((g) => `${g.id}:${g.passed}`)).toEqual(["vitest:true"]);
    // Both tests of the task ran and passed, by loopgate's own count of the vitest run.
    const tamper = (env.gates[0] as { tamper?: { tests?: { passed: number } | null } }).tamper;
    expect(tamper?.tests?.passed).toBe(2);
    expect(env.dependencies?.[0]?.path).toBe("node_modules");
    // The cache vitest wrote stayed in the sandbox: the store's copy holds only the empty mount point.
    const copy = join(store, "dependencies", env.dependencies?.[0]?.digest ?? "");
    expect(readdirSync(join(copy, ".vite"))).toEqual([]);
    expect(existsSync(join(nm, ".vite"))).toBe(false);
  }, 320_000);
});
