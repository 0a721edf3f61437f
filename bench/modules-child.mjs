// One CLI start for bench/modules-bench.ts: registers bench/modules-hook.mjs (every module URL loaded goes to
// the file OUT), then runs the compiled CLI of the tree ROOT (dist/cli/main.js) with the remaining arguments.
// Usage: node bench/modules-child.mjs OUT ROOT ARG…
import { register } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [out, root, ...argv] = process.argv.slice(2);
register("./modules-hook.mjs", import.meta.url, { data: { out } });
const { main } = await import(pathToFileURL(join(root, "dist", "cli", "main.js")).href);
process.exitCode = await main(argv);
