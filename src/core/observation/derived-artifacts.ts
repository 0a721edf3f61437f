/**
 * Derived artifacts: files a tool writes from the sources and later trusts in place of redoing the work
 * (bytecode, incremental build state, lint and type-check caches). A builder that writes one can make a
 * gate run or skip something other than the delivered source — CPython runs a `.pyc` whose header
 * matches the source's mtime and size, `tsc --incremental` reuses the diagnostics a `.tsbuildinfo`
 * records — while the source diff shows nothing or "Binary files differ". The gate environment never
 * takes them from the builder; the gate's own run rebuilds whatever it needs.
 *
 * Checked and not listed, on purpose: Node 20 has no on-disk compile cache (`module.enableCompileCache`
 * and `NODE_COMPILE_CACHE` arrived in Node 22.1); Go's build and test caches live in `GOCACHE`, outside
 * the tree, content-keyed, and gates point it at their private /tmp; Jest caches in /tmp by default.
 */

/** Which rule made a path a derived artifact, in words for the finding. */
export interface DerivedArtifact {
  /** The runtime or tool that writes and trusts it. */
  runtime: string;
  /** What the file is. */
  what: string;
}

const PYC = {
  runtime: "Python",
  what: "bytecode, which CPython runs instead of a source whose mtime and size it records",
};

/** A directory name that holds only one tool's cache, wherever it appears. */
const CACHE_DIRS: Readonly<Record<string, DerivedArtifact>> = {
  __pycache__: PYC,
  ".pytest_cache": {
    runtime: "pytest",
    what: "the pytest cache, which --lf, --ff and --sw use to pick the tests to run",
  },
  ".mypy_cache": {
    runtime: "mypy",
    what: "the mypy cache, whose recorded results mypy reuses for unchanged files",
  },
  ".ruff_cache": {
    runtime: "ruff",
    what: "the ruff cache, whose recorded results ruff reuses for unchanged files",
  },
};

/** A directory under `node_modules/` that holds tools' caches (babel, eslint-loader, terser; Vite and Vitest). */
const NODE_CACHE_DIRS: Readonly<Record<string, DerivedArtifact>> = {
  ".cache": {
    runtime: "JavaScript tools",
    what: "a tool cache (babel, eslint, terser), replayed for unchanged inputs",
  },
  ".vite": { runtime: "Vite/Vitest", what: "Vite's pre-bundled dependencies and Vitest's results cache" },
};

/** A file name suffix of a derived file. */
const SUFFIXES: readonly [string, DerivedArtifact][] = [
  [".pyc", PYC],
  [".pyo", PYC],
  [
    ".tsbuildinfo",
    {
      runtime: "TypeScript",
      what: "incremental build state, whose recorded diagnostics tsc reuses and `tsc -b` skips by",
    },
  ],
  [
    ".o",
    {
      runtime: "make",
      what: "an object file, which make does not rebuild while it is newer than its source",
    },
  ],
];

const ESLINT_CACHE: DerivedArtifact = {
  runtime: "ESLint",
  what: "the ESLint cache, which skips linting files it records as clean",
};
const CARGO_TARGET: DerivedArtifact = {
  runtime: "Rust",
  what: "cargo's build output and fingerprints, which decide by mtime whether to rebuild",
};
const PY_EXTENSION: DerivedArtifact = {
  runtime: "Python",
  what: "a compiled extension module, which CPython imports in place of the .py source of the same name",
};

/** `name.cpython-311-x86_64-linux-gnu.so`, `name.abi3.so`, `name.so`, `name.pyd` → `name`. */
const EXTENSION = /^([^.]+)(?:\.[^./]+)?\.(?:so|pyd)$/;

/**
 * The derived artifact `path` is (or lies under), or null. `exists` says whether a path exists in the
 * pristine workspace or the builder's: `target/` is cargo's only next to a `Cargo.toml`, and an extension
 * module is derived only where it shadows a Python source.
 */
export function derivedArtifact(path: string, exists: (path: string) => boolean): DerivedArtifact | null {
  const parts = path.split("/");
  for (let i = 0; i < parts.length; i++) {
    const name = parts[i] as string;
    const dir = parts.slice(0, i).join("/");
    if (Object.hasOwn(CACHE_DIRS, name)) return CACHE_DIRS[name] ?? null;
    if (i > 0 && parts[i - 1] === "node_modules" && Object.hasOwn(NODE_CACHE_DIRS, name))
      return NODE_CACHE_DIRS[name] ?? null;
    if (name === "target" && exists(dir === "" ? "Cargo.toml" : `${dir}/Cargo.toml`)) return CARGO_TARGET;
  }
  const base = parts[parts.length - 1] as string;
  if (base === ".eslintcache") return ESLINT_CACHE;
  for (const [suffix, artifact] of SUFFIXES) if (base.endsWith(suffix) && base !== suffix) return artifact;
  const ext = EXTENSION.exec(base);
  if (ext) {
    const dir = parts.slice(0, -1).join("/");
    const stem = dir === "" ? ext[1] : `${dir}/${ext[1]}`;
    if (exists(`${stem}.py`) || exists(`${stem}/__init__.py`)) return PY_EXTENSION;
  }
  return null;
}
