#!/usr/bin/env node
// Launcher: runs the compiled CLI. `npm install` builds it through the `prepare` script.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const entry = join(root, "dist", "cli", "main.js");
if (!existsSync(entry)) {
  process.stderr.write(`loopgate: ${entry} is missing; run \`npm run build\` in ${root} first.\n`);
  process.exit(2);
}
const { main } = await import(pathToFileURL(entry).href);
process.exitCode = await main(process.argv.slice(2));
