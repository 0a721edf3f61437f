import { statSync } from "node:fs";
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { InputError } from "../core/kernel/errors.js";

/** The placeholders a builder command may hold; anything else in braces is a typo. */
export const BUILDER_PLACEHOLDERS = ["prompt", "prompt_file", "required_fix", "workspace"] as const;

/** Programs whose first non-option argument is a script file they read. */
const INTERPRETER = /^(?:(?:ba|da|z|k|a)?sh|node|nodejs|python(?:\d+(?:\.\d+)?)?|perl|ruby)$/;

/** Options after which an interpreter runs code from the command line, not a script file. */
const CODE_OPTIONS = new Set(["-c", "-e", "-m", "-p", "--eval", "--print"]);

/** Host directories the sandbox already shows read-only: files there need no mount. */
export const SYSTEM_PREFIXES = [
  "/usr/",
  "/bin/",
  "/sbin/",
  "/lib/",
  "/lib32/",
  "/lib64/",
  "/libx32/",
  "/etc/",
];

const isFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** True when argv[0] names an interpreter (`bash`, `/usr/bin/python3`, `node`). */
export function isInterpreter(program: string): boolean {
  return INTERPRETER.test(basename(program));
}

/**
 * The index of the script word of an interpreter command (`bash -e ./x.sh`: 2), or null when the
 * interpreter runs inline code (`sh -c '…'`, `node -e …`) or argv[0] is no interpreter.
 */
export function scriptIndex(words: readonly string[]): number | null {
  if (!isInterpreter(words[0] ?? "")) return null;
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (CODE_OPTIONS.has(w)) return null;
    if (w === "--") return i + 1 < words.length ? i + 1 : null;
    if (!w.startsWith("-")) return i;
  }
  return null;
}

/**
 * Refuses `{placeholders}` loopgate does not know (`{promt}`), naming the known ones: a typo would
 * otherwise reach the builder literally and cost an attempt.
 */
export function checkPlaceholders(words: readonly string[]): void {
  const known: readonly string[] = BUILDER_PLACEHOLDERS;
  // `${HOME}` inside `sh -c '…'` is the shell's, not a placeholder.
  for (const w of words)
    for (const m of w.matchAll(/(?<!\$)\{([A-Za-z_][A-Za-z0-9_-]*)\}/g))
      if (!known.includes(m[1] as string))
        throw new InputError(
          `unknown placeholder {${m[1]}} in the builder command; the known ones are ${BUILDER_PLACEHOLDERS.map((k) => `{${k}}`).join(", ")}`,
          "--builder",
        );
}

/**
 * Rewrites the words of a builder command that name existing files relative to `cwd` (argv[0] with a
 * slash, any word with a slash, an interpreter's script) to absolute paths: the builder runs in the
 * run workspace, where `./my-agent.sh` would not be found, as a shell user means the folder they are in.
 */
export function anchorWords(words: readonly string[], cwd: string): string[] {
  const script = scriptIndex(words);
  return words.map((w, i) => {
    if (w.includes("{") || isAbsolute(w) || w.startsWith("-")) return w;
    if (!w.includes("/") && i !== script) return w;
    const abs = resolve(cwd, w);
    return isFile(abs) ? abs : w;
  });
}

const shellQuote = (w: string) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`);

/** Joins words back into a command line that `splitCommandLine` splits into the same words. */
export function joinCommandLine(words: readonly string[]): string {
  return words.map(shellQuote).join(" ");
}

/** What a command builder needs to see read-only besides the workspace, before any refusal rule. */
export interface NamedFiles {
  /** Existing files named by absolute path in the command, outside the system directories. */
  files: string[];
  /** The folder of an interpreter's script (its siblings: libraries, config), when there is one. */
  folders: string[];
}

/** The files an (anchored) builder command names, and the folder of its script if it is an interpreter's. */
export function namedFiles(words: readonly string[]): NamedFiles {
  const script = scriptIndex(words);
  const files: string[] = [];
  const folders: string[] = [];
  words.forEach((w, i) => {
    if (i === 0 || !isAbsolute(w) || w.includes("{") || !isFile(w)) return;
    if (SYSTEM_PREFIXES.some((p) => w.startsWith(p))) return;
    if (!files.includes(w)) files.push(w);
    if (i === script && !folders.includes(dirname(w))) folders.push(dirname(w));
  });
  return { files, folders };
}
