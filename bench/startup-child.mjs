// One CLI start for bench/startup-bench.ts: runs the CLI from the compiled modules (`modules`), or from the
// bundle with its code cache (`bundle`) or without it (`bundle-nocache`), and prints its own CPU time
// (user + system, this process only: never the gates or builders it starts) as the last line on fd 3.
import { readFileSync, writeSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import vm from "node:vm";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const [mode, ...argv] = process.argv.slice(2);
process.on("exit", () => {
  const u = process.resourceUsage();
  writeSync(3, `${(u.userCPUTime + u.systemCPUTime) / 1000}\n`);
});
let main;
if (mode === "modules") ({ main } = await import(pathToFileURL(join(root, "dist", "cli", "main.js")).href));
else if (mode === "bundle") {
  const { loadBundle } = await import(pathToFileURL(join(root, "bin", "load-bundle.js")).href);
  ({ main } = loadBundle(join(root, "dist", "loopgate.cjs")).exports);
} else {
  const file = join(root, "dist", "loopgate.cjs");
  const script = new vm.Script(Module.wrap(readFileSync(file, "utf8")), { filename: file });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  ({ main } = module.exports);
}
process.exitCode = await main(argv);
