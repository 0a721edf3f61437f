// Loads the one-file CLI bundle (dist/loopgate.cjs, made by scripts/bundle.mjs) with V8's code cache.
// The cache is written only at build time, by `--write-cache`, into the package's own dist/. It starts
// with the SHA-256 of the bundle it was made from: V8 itself checks a cache against the source's length
// only, so a cache left from another build is never handed to it. A cache V8 rejects (another Node,
// other flags) costs only speed: it compiles from source.
"use strict";
const { createHash } = require("node:crypto");
const { readFileSync, renameSync, writeFileSync } = require("node:fs");
const Module = require("node:module");
const { dirname } = require("node:path");
const vm = require("node:vm");

const { createRequire } = Module;

const HASH_BYTES = 32;

/** The V8 data of `file`'s cache when the cache was made from exactly `source`, else undefined. */
function cacheFor(file, source) {
  let cache;
  try {
    cache = readFileSync(`${file}.cache`);
  } catch {
    return undefined;
  }
  if (cache.length <= HASH_BYTES) return undefined;
  const hash = createHash("sha256").update(source).digest();
  return hash.equals(cache.subarray(0, HASH_BYTES)) ? cache.subarray(HASH_BYTES) : undefined;
}

/** Runs the bundle's top level and returns its exports (and the compiled script, for its cache). */
function loadBundle(file) {
  const source = readFileSync(file);
  const script = new vm.Script(Module.wrap(source.toString("utf8")), {
    filename: file,
    cachedData: cacheFor(file, source),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  return { exports: module.exports, script, source };
}

module.exports = { cacheFor, loadBundle };

if (require.main === module && process.argv[2] === "--write-cache") {
  const file = process.argv[3];
  const { script, source } = loadBundle(file);
  const tmp = `${file}.cache.${process.pid}`;
  writeFileSync(
    tmp,
    Buffer.concat([createHash("sha256").update(source).digest(), script.createCachedData()]),
  );
  renameSync(tmp, `${file}.cache`);
}
