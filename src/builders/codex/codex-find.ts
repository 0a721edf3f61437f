import { accessSync, constants, existsSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { packageRoot } from "../../core/kernel/package-root.js";
import { resolveProgram } from "../../sandbox/environment.js";

/** The native codex binary, the folders it needs mounted, and the PATH entries it adds. */
export interface CodexInstall {
  binary: string;
  mounts: string[];
  path: string[];
}

/** The version loopgate pins (package.json devDependencies) and the install line the messages give. */
export const CODEX_INSTALL = "npm install @openai/codex@0.169.0 (loopgate's dev dependency pins it)";

const CODEX_MISSING = `codex not found: ${CODEX_INSTALL}, put codex on PATH, or set LOOPGATE_CODEX_BIN to its binary`;

/** The codex to use: `given`, else $LOOPGATE_CODEX_BIN, else none named (the pinned one, then PATH). */
const named = (given?: string) => given ?? (process.env.LOOPGATE_CODEX_BIN || undefined);

/** The native codex binary and the folders it needs, from the npm wrapper, a native path, or PATH. */
export function findCodex(given?: string): CodexInstall | null {
  const chosen = named(given);
  const root = packageRoot();
  const candidates = (
    chosen !== undefined
      ? [chosen]
      : [
          join(root, "node_modules", ".bin", "codex"),
          resolveProgram("codex", process.cwd(), process.env.PATH ?? ""),
        ]
  ).filter((c): c is string => typeof c === "string" && existsSync(c));
  for (const c of candidates) {
    const real = realpathSync(c);
    if (!real.endsWith(".js")) return { binary: real, mounts: [dirname(real)], path: [] };
    // The npm wrapper (bin/codex.js) starts vendor/<triple>/bin/codex of the platform package beside it.
    const triple = process.arch === "arm64" ? "aarch64-unknown-linux-musl" : "x86_64-unknown-linux-musl";
    const platform = process.arch === "arm64" ? "codex-linux-arm64" : "codex-linux-x64";
    for (const vendor of [
      join(dirname(real), "..", "..", platform, "vendor", triple),
      join(dirname(real), "..", "vendor", triple),
    ]) {
      const binary = join(vendor, "bin", "codex");
      if (existsSync(binary)) {
        const dir = realpathSync(vendor);
        return { binary: join(dir, "bin", "codex"), mounts: [dir], path: [join(dir, "codex-path")] };
      }
    }
  }
  return null;
}

/**
 * Why codex cannot be started here (not found, or not an executable file), naming the binary and how
 * to install it; null when it can. A builder that cannot start is a TOOL_FAILURE before any attempt.
 */
export function codexPreflight(given?: string): string | null {
  const chosen = named(given);
  const found = findCodex(given);
  if (!found)
    return chosen !== undefined
      ? `codex cannot be started: ${chosen} does not exist (or is not codex's npm wrapper or native binary); ${CODEX_INSTALL}, or fix ${given !== undefined ? "the path" : "LOOPGATE_CODEX_BIN"}`
      : CODEX_MISSING;
  try {
    accessSync(found.binary, constants.X_OK);
  } catch {
    return `codex cannot be started: ${found.binary} is not executable; reinstall it (${CODEX_INSTALL}) or chmod +x it`;
  }
  return null;
}
