#!/usr/bin/env node
// Launcher: runs the CLI. `npm install` builds it through the `prepare` script: the compiled modules in
// dist/, and the one-file bundle dist/loopgate.cjs with its code cache (faster to start; scripts/bundle.mjs).
// The bundle is used only while it is newer than the compiled modules, so a bare `tsc` never runs stale code.
// This folder is CommonJS (bin/package.json): a CommonJS entry starts without Node's ES module loader,
// about 6 ms less CPU per command; the compiled modules, when used, are still loaded with import().
"use strict";
const { existsSync, statSync } = require("node:fs");
const { dirname, join } = require("node:path");
const { pathToFileURL } = require("node:url");

const root = dirname(__dirname);
const modules = join(root, "dist", "cli", "main.js");
const bundle = join(root, "dist", "loopgate.cjs");
const mtime = (f) => {
  try {
    return statSync(f).mtimeMs;
  } catch {
    return -1;
  }
};
async function start() {
  let main;
  if (mtime(bundle) >= 0 && mtime(bundle) >= mtime(modules)) {
    ({ main } = require("./load-bundle.js").loadBundle(bundle).exports);
  } else if (existsSync(modules)) {
    ({ main } = await import(pathToFileURL(modules).href));
  } else {
    process.stderr.write(`loopgate: ${modules} is missing; run \`npm run build\` in ${root} first.\n`);
    process.exit(2);
  }
  process.exitCode = await main(process.argv.slice(2));
}

start();
