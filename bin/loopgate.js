#!/usr/bin/env node
// Launcher: runs the CLI. `npm install` builds it through the `prepare` script: the compiled modules in
// dist/, and the one-file bundle dist/loopgate.cjs with its code cache (faster to start; scripts/bundle.mjs).
// The bundle is used only while it is newer than the compiled modules, so a bare `tsc` never runs stale code.
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const modules = join(root, "dist", "cli", "main.js");
const bundle = join(root, "dist", "loopgate.cjs");
const mtime = (f) => {
  try {
    return statSync(f).mtimeMs;
  } catch {
    return -1;
  }
};
let main;
if (mtime(bundle) >= 0 && mtime(bundle) >= mtime(modules)) {
  const { loadBundle } = await import("./load-bundle.js");
  ({ main } = loadBundle(bundle).exports);
} else if (existsSync(modules)) {
  ({ main } = await import(pathToFileURL(modules).href));
} else {
  process.stderr.write(`loopgate: ${modules} is missing; run \`npm run build\` in ${root} first.\n`);
  process.exit(2);
}
process.exitCode = await main(process.argv.slice(2));
