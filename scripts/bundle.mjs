// `npm run build`'s second step: bundles the compiled CLI (dist/cli/main.js) into one CommonJS file,
// dist/loopgate.cjs, and caches V8's compiled code for it in dist/loopgate.cjs.cache. bin/loopgate.js
// starts from the bundle when it is newer than the compiled modules, else from the modules.
//
// Why: every command is a fresh Node process, and most of a short command's CPU went into finding,
// reading and compiling ~400 ES modules (ours and zod's). One file with its code cache starts the same
// command with about half the CPU (npm run bench:startup measures it). Node 20 has no module compile
// cache of its own (module.enableCompileCache is Node 22), hence vm.Script's cachedData.
import { spawnSync } from "node:child_process";
import { rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

/**
 * A dynamic `import()` of a Node builtin or an external package stays an `import()` in the CommonJS
 * bundle, and a script run from a code cache has no loader for it (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING
 * at run time, on whichever path reaches it). Refused here, at build time: import it statically.
 */
export const noDynamicImportOfExternals = {
  name: "no-dynamic-import-of-externals",
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind !== "dynamic-import" || args.path.startsWith(".")) return undefined;
      return {
        errors: [
          {
            text: `dynamic import("${args.path}") in ${args.importer}: import it statically (the bundle cannot load it at run time)`,
          },
        ],
      };
    });
  },
};

/** Bundles dist/cli/main.js into dist/loopgate.cjs under `root`, then writes its code cache. */
export async function bundleCli(root) {
  const outfile = join(root, "dist", "loopgate.cjs");
  rmSync(`${outfile}.cache`, { force: true });

  await build({
    entryPoints: [join(root, "dist", "cli", "main.js")],
    outfile,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    // Native or optional-native packages, and the model and MCP SDKs (loaded only by the commands that
    // use them, and kept exactly as installed): required from node_modules at run time.
    external: ["better-sqlite3", "pg", "ai", "@ai-sdk/*", "@modelcontextprotocol/*", "@babel/*"],
    // Every module's import.meta.url becomes the bundle's own URL; code that looks for files of the package
    // finds its root by walking up (src/core/kernel/package-root.ts), so it works from here too.
    define: { "import.meta.url": "__loopgate_bundle_url" },
    banner: { js: 'const __loopgate_bundle_url = require("node:url").pathToFileURL(__filename).href;' },
    // Whitespace, comments and redundant syntax out, names kept: every start reads, hashes, decodes and
    // deserialises the whole file, and a smaller one costs less each time (npm run bench:startup).
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: "warning",
    plugins: [noDynamicImportOfExternals],
  });

  // The code cache is made by a fresh node with default flags (V8 rejects a cache made under other flags),
  // after the bundle's top level has run, as it does at every start.
  const made = spawnSync(process.execPath, [join(root, "bin", "load-bundle.js"), "--write-cache", outfile], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (made.status !== 0) {
    process.stderr.write(
      `bundle: could not write the code cache (exit ${made.status}); the CLI still starts without it\n`,
    );
  }
  const size = (f) => {
    try {
      return `${(statSync(f).size / 1e6).toFixed(1)} MB`;
    } catch {
      return "none";
    }
  };
  process.stdout.write(`bundle: ${outfile} (${size(outfile)}), code cache ${size(`${outfile}.cache`)}\n`);
}

/**
 * True when the bundle and its code cache were made after everything they are made from: the compiled
 * modules (the incremental tsc of `npm run build` rewrites dist/.tsbuildinfo whenever it emits, and leaves
 * it alone when no source changed; it compares the sources' contents, not their times, so a file saved
 * during a build is compiled by the next one),
 * this script, the loader, and the installed packages. `npm test` builds first, and after `npm ci` (whose
 * prepare step builds) or a test run with no source change, this is what spares the second bundling.
 */
export function bundleIsCurrent(root) {
  const mtime = (f) => {
    try {
      return statSync(f).mtimeMs;
    } catch {
      return Number.NaN;
    }
  };
  const outfile = join(root, "dist", "loopgate.cjs");
  const made = Math.min(mtime(outfile), mtime(`${outfile}.cache`));
  const inputs = [
    join(root, "dist", ".tsbuildinfo"),
    join(root, "dist", "cli", "main.js"),
    join(root, "scripts", "bundle.mjs"),
    join(root, "bin", "load-bundle.js"),
    join(root, "package-lock.json"),
  ].map(mtime);
  // A missing input or output is NaN, and every comparison with NaN is false: not current.
  return inputs.every((t) => made >= t);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  if (!process.argv.includes("--force") && bundleIsCurrent(root)) {
    process.stdout.write("bundle: up to date (dist/loopgate.cjs is newer than what it is made from)\n");
  } else {
    await bundleCli(root);
  }
}
