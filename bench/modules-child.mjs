// One CLI start for bench/modules-bench.ts: registers bench/modules-hook.mjs (every module URL loaded goes to
// the file OUT), then runs the compiled CLI of the tree ROOT (dist/cli/main.js) with the remaining arguments.
// CommonJS modules loaded by require() (which bypasses the hook) are added from the require cache at the end.
// Usage: node bench/modules-child.mjs OUT ROOT ARG…
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [out, root, ...argv] = process.argv.slice(2);
register("./modules-hook.mjs", import.meta.url, { data: { out } });
const { main } = await import(pathToFileURL(join(root, "dist", "cli", "main.js")).href);
process.exitCode = await main(argv);
const required = Object.keys(createRequire(import.meta.url).cache).map((f) => pathToFileURL(f).href);
appendFileSync(out, required.map((u) => `${u}\n`).join(""));
