import { basename, dirname } from "node:path";
import { runSandboxed } from "../sandbox/bubblewrap.js";
import { resolveProgram, scrubbedEnv } from "../sandbox/environment.js";
import { fitBuilderArgv } from "./argument-limits.js";
import type { Builder, BuilderContext, BuilderResult } from "./builder.js";
import {
  anchorWords,
  checkPlaceholders,
  joinCommandLine,
  namedFiles,
  SYSTEM_PREFIXES,
  scriptIndex,
} from "./command-files.js";
import { splitCommandLine } from "./command-line.js";

/** Finds argv[0] as the builder would: the run workspace first, then the caller's PATH. */
function findProgram(program: string, workspace: string): string | null {
  return resolveProgram(program, workspace) ?? resolveProgram(program, workspace, process.env.PATH ?? "");
}

const notFoundMessage = (program: string) =>
  `builder command not found: ${program} (looked in the workspace and on PATH); give its path (relative to where you run loopgate, or absolute) or install it`;

/** The file an interpreter or shell said it could not find, from its own error line. */
function missingPath(output: string): string | null {
  const patterns = [
    /can't open file '([^']+)'/,
    /Cannot find module '([^']+)'/,
    /cannot open ([^\s:]+)/,
    /([^\s:'"`]+): (?:No such file or directory|not found)/,
  ];
  for (const re of patterns) {
    const m = re.exec(output);
    if (m?.[1]) return m[1];
  }
  return null;
}

const SANDBOX_SEES =
  "in its sandbox the builder sees the system (/usr, /etc), the run workspace (its working directory), " +
  "the files its command names (for an interpreter's script also the script's folder, unless that is the task folder) " +
  "and the --builder-mount paths";

/**
 * Why a pass that changed nothing means the builder never started: exit 126/127 (the shell's "not
 * executable"/"not found"), or an interpreter that could not open its script. Null otherwise.
 */
export function diagnoseStart(words: readonly string[], r: BuilderResult): string | null {
  if (r.timedOut || r.exitCode === null || r.exitCode === 0) return null;
  const script = scriptIndex(words);
  const scriptWord = script === null ? null : (words[script] as string);
  const missing = missingPath(r.output);
  const couldNotOpenScript =
    scriptWord !== null &&
    /No such file or directory|can't open file|cannot open|Cannot find module/.test(r.output) &&
    r.output.includes(basename(scriptWord));
  if (r.exitCode !== 126 && r.exitCode !== 127 && !couldNotOpenScript) return null;
  const firstLine = r.output.trim().split("\n")[0]?.slice(0, 300) ?? "";
  const what = couldNotOpenScript
    ? `could not open its script ${scriptWord}`
    : r.exitCode === 126
      ? "exited 126 (a program it runs is not executable)"
      : "exited 127 (a program or file it runs was not found)";
  return (
    `the builder could not start: ${what}${missing ? `; missing: ${missing}` : ""}, and it changed nothing in the workspace` +
    `${firstLine ? ` (it printed ${JSON.stringify(firstLine)})` : ""}. Fix: ${SANDBOX_SEES}; ` +
    "name the file by its path from where you run loopgate, or mount what it needs with --builder-mount PATH"
  );
}

/** The result of a builder that never started, with why. */
function notStarted(why: string): BuilderResult {
  return { exitCode: null, signal: null, timedOut: false, durationMs: 0, output: "", infrastructure: why };
}

/**
 * Runs argv as the builder, inside the sandbox: the run workspace read-write, the program itself
 * read-only when it lives outside the system directories, and nothing else of the host.
 */
export function runBuilderArgv(argv: readonly string[], ctx: BuilderContext): Promise<BuilderResult> {
  const program = argv[0] ?? "";
  const resolved = findProgram(program, ctx.workspace);
  if (!resolved) return Promise.resolve(notStarted(notFoundMessage(program)));
  const inWorkspace = resolved.startsWith(`${ctx.workspace}/`);
  const system = SYSTEM_PREFIXES.some((p) => resolved.startsWith(p));
  const readonly = [...ctx.mounts, dirname(ctx.promptFile)];
  if (!inWorkspace && !system) readonly.push(resolved);
  const env = scrubbedEnv({
    home: "/tmp",
    allow: ctx.allowEnv,
    extra: {
      LOOPGATE_RUN_ID: ctx.runId,
      LOOPGATE_ATTEMPT: String(ctx.attempt),
      LOOPGATE_PROMPT_FILE: ctx.promptFile,
    },
  });
  let running: ReturnType<typeof runSandboxed>;
  try {
    running = runSandboxed(
      {
        argv: [resolved, ...argv.slice(1)],
        cwd: ctx.workspace,
        writable: [ctx.workspace],
        readonly,
        ...(ctx.masked?.length ? { masked: ctx.masked } : {}),
        ...(ctx.dependencies?.length ? { dependencies: ctx.dependencies } : {}),
        env,
        network: ctx.network,
        timeoutMs: ctx.timeoutMs,
        ...(ctx.limits ? { limits: ctx.limits } : {}),
        maxOutputBytes: 16_000,
        ...(ctx.onOutput ? { onOutput: ctx.onOutput } : {}),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      },
      ctx.sandbox,
    );
  } catch (e) {
    // spawn throws, rather than reports, some failures (E2BIG): the builder did not start; the run goes on to its verdict.
    return Promise.resolve(notStarted(`builder could not start: ${(e as Error).message}`));
  }
  return running.then((r) => ({
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    durationMs: r.durationMs,
    output: r.output,
    infrastructure: r.spawnError ? `builder could not start: ${r.spawnError}` : null,
  }));
}

/**
 * An external agent command (`claude -p {prompt}`), re-run on every attempt with the required fix.
 * Words naming files relative to `cwd` (where the user typed the command) become absolute, and the
 * files it names are asked for read-only (`needs`); an unknown `{placeholder}` is an InputError.
 */
export function commandBuilder(commandLine: string, cwd = process.cwd()): Builder {
  const given = splitCommandLine(commandLine);
  checkPlaceholders(given);
  const words = anchorWords(given, cwd);
  const changed = words.some((w, i) => w !== given[i]);
  return {
    descriptor: { kind: "command", command: changed ? joinCommandLine(words) : commandLine },
    needs: namedFiles(words),
    preflight: (workspace) =>
      words[0]?.includes("{") || findProgram(words[0] ?? "", workspace)
        ? null
        : notFoundMessage(words[0] ?? ""),
    cannotStart: (r) => diagnoseStart(words, r),
    run(ctx) {
      const fitted = fitBuilderArgv(words, {
        prompt: ctx.prompt,
        prompt_file: ctx.promptFile,
        required_fix: ctx.requiredFix ?? "",
        workspace: ctx.workspace,
      });
      if (fitted.error !== null) return Promise.resolve(notStarted(fitted.error));
      if (fitted.note) ctx.onNote?.(fitted.note);
      return runBuilderArgv(fitted.argv, ctx);
    },
  };
}

/**
 * The task's reference solution, run as the builder in the same sandbox. It is the task author's own,
 * so it may read the files beside it (its folder is asked for as trusted); held-out folders stay hidden.
 */
export function oracleBuilder(oraclePath: string): Builder {
  return {
    descriptor: { kind: "oracle", command: oraclePath },
    needs: { files: [oraclePath], folders: [dirname(oraclePath)], trusted: true },
    preflight: (workspace) => (findProgram(oraclePath, workspace) ? null : notFoundMessage(oraclePath)),
    cannotStart: (r) => diagnoseStart([oraclePath], r),
    run: (ctx) => runBuilderArgv([oraclePath], ctx),
  };
}

/** A builder that changes nothing: the control for "do the gates discriminate?". */
export function noopBuilder(): Builder {
  return {
    descriptor: { kind: "noop" },
    run: async () => ({
      exitCode: 0,
      signal: null,
      timedOut: false,
      durationMs: 0,
      output: "",
      infrastructure: null,
    }),
  };
}
