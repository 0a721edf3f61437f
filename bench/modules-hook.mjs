// ESM loader hook for bench/modules-bench.ts (registered by bench/modules-child.mjs): appends the URL of every
// module Node loads through the ES module loader to the file named in `data.out`, one per line. CommonJS
// packages count once, by the entry their ES importer loads; their own require() calls bypass this hook.
import { appendFileSync } from "node:fs";

let out;

export function initialize(data) {
  out = data.out;
}

export async function load(url, context, nextLoad) {
  appendFileSync(out, `${url}\n`);
  return nextLoad(url, context);
}
