// The one-file CLI bundle (scripts/bundle.mjs) and its launcher (bin/loopgate.js, bin/load-bundle.js):
// the same CLI as the compiled modules, used only while fresh, and never fed a code cache of another build.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noDynamicImportOfExternals } from "../../scripts/bundle.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const { LOOPGATE_STORE: _, ...env } = process.env;
const node = (args: string[], cwd = ROOT) =>
  spawnSync(process.execPath, args, { cwd, encoding: "utf8", env });
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

let pkg: string;
beforeAll(() => {
  // A copy of the installed package: package.json, bin/, dist/ (as `npm run build` left it), node_modules.
  expect(statSync(join(ROOT, "dist", "loopgate.cjs")).isFile(), "run `npm run build` first").toBe(true);
  pkg = mkdtempSync(join(tmpdir(), "loopgate-bundle-"));
  cpSync(join(ROOT, "package.json"), join(pkg, "package.json"));
  cpSync(join(ROOT, "bin"), join(pkg, "bin"), { recursive: true });
  cpSync(join(ROOT, "dist"), join(pkg, "dist"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(pkg, "node_modules"));
});
afterAll(() => rmSync(pkg, { recursive: true, force: true }));

const bin = () => join(pkg, "bin", "loopgate.js");
const setAge = (file: string, secondsAgo: number) => {
  const t = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(file, t, t);
};

describe("the CLI bundle", () => {
  it("prints what the compiled modules print", () => {
    const fromModules = (args: string[]) =>
      node([
        "--input-type=module",
        "-e",
        `const { main } = await import(${JSON.stringify(join(ROOT, "dist", "cli", "main.js"))}); process.exitCode = await main(${JSON.stringify(args)});`,
      ]);
    for (const args of [["--version"], ["--help"], ["run", "--help"], ["goal", "--help"], ["nonsense"]]) {
      const a = node([join(ROOT, "bin", "loopgate.js"), ...args]);
      const b = fromModules(args);
      expect({ code: a.status, out: a.stdout, err: a.stderr }, args.join(" ")).toEqual({
        code: b.status,
        out: b.stdout,
        err: b.stderr,
      });
    }
    expect(node([join(ROOT, "bin", "loopgate.js"), "--version"]).stdout.trim()).toBe(VERSION);
  });

  it("is used only while it is newer than the compiled modules", () => {
    const bundle = join(pkg, "dist", "loopgate.cjs");
    const saved = readFileSync(bundle);
    try {
      writeFileSync(
        bundle,
        'exports.main = async () => { process.stdout.write("from the bundle\\n"); return 0; };\n',
      );
      rmSync(`${bundle}.cache`, { force: true });
      setAge(join(pkg, "dist", "cli", "main.js"), 60);
      expect(node([bin(), "--version"]).stdout).toBe("from the bundle\n");
      // A bare `tsc` after the bundle: the modules are newer, so they run, not the stale bundle.
      setAge(bundle, 120);
      expect(node([bin(), "--version"]).stdout.trim()).toBe(VERSION);
      rmSync(bundle);
      expect(node([bin(), "--version"]).stdout.trim()).toBe(VERSION);
    } finally {
      writeFileSync(bundle, saved);
    }
  });

  it("never hands V8 a code cache made from another bundle, and starts when the cache is damaged", async () => {
    const { cacheFor } = (await import(join(ROOT, "bin", "load-bundle.js"))) as {
      cacheFor(file: string, source: Buffer): Buffer | undefined;
    };
    const dir = mkdtempSync(join(tmpdir(), "loopgate-cache-"));
    try {
      const file = join(dir, "b.cjs");
      const source = Buffer.from("exports.x = 1;\n");
      writeFileSync(file, source);
      const sha = (b: Buffer) => createHash("sha256").update(b).digest();
      const data = Buffer.from("v8 data");
      writeFileSync(`${file}.cache`, Buffer.concat([sha(source), data]));
      expect(cacheFor(file, source)).toEqual(data);
      // Same length, other content: V8 would take it (it checks the length only); the hash refuses it.
      expect(cacheFor(file, Buffer.from("exports.y = 2;\n"))).toBeUndefined();
      writeFileSync(`${file}.cache`, sha(source).subarray(0, 20));
      expect(cacheFor(file, source)).toBeUndefined();
      rmSync(`${file}.cache`);
      expect(cacheFor(file, source)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The real bundle with a cache of the right hash whose V8 data is garbage: V8 rejects it, the CLI runs.
    const bundle = join(pkg, "dist", "loopgate.cjs");
    setAge(join(pkg, "dist", "cli", "main.js"), 60);
    const source = readFileSync(bundle);
    writeFileSync(
      `${bundle}.cache`,
      Buffer.concat([createHash("sha256").update(source).digest(), Buffer.alloc(4096, 0x5a)]),
    );
    const r = node([bin(), "--version"]);
    expect({ code: r.status, out: r.stdout.trim(), err: r.stderr }).toEqual({
      code: 0,
      out: VERSION,
      err: "",
    });
  });

  it("refuses at build time a dynamic import the bundle could not load at run time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "loopgate-bundle-src-"));
    try {
      mkdirSync(join(dir, "src"));
      writeFileSync(join(dir, "src", "own.js"), "export const n = 1;\n");
      writeFileSync(
        join(dir, "src", "entry.js"),
        'export async function f() { const os = await import("node:os"); const own = await import("./own.js"); return os.EOL + own.n; }\n',
      );
      const go = (entry: string) =>
        build({
          entryPoints: [join(dir, "src", entry)],
          outfile: join(dir, "out.cjs"),
          bundle: true,
          format: "cjs",
          platform: "node",
          write: false,
          logLevel: "silent",
          plugins: [noDynamicImportOfExternals],
        });
      await expect(go("entry.js")).rejects.toThrow(
        /dynamic import\("node:os"\) in .*entry\.js: import it statically/,
      );
      // A dynamic import of the package's own module is bundled (it becomes a lazy require): allowed.
      writeFileSync(
        join(dir, "src", "ok.js"),
        'export async function f() { return (await import("./own.js")).n; }\n',
      );
      await expect(go("ok.js")).resolves.toBeDefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
