import { existsSync, realpathSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runSandboxed } from "../../sandbox/bubblewrap.js";
import { resolveProgram, SANDBOX_PATH, scrubbedEnv } from "../../sandbox/environment.js";
import type { Builder, BuilderContext, BuilderResult } from "../builder.js";
import { type CodexFacts, codexFacts, codexRuntimeEvents, describeFacts } from "./exec-events.js";

/** How the Codex builder reaches its model. */
export interface CodexOptions {
  /** The provider's Responses API base URL (`…/v1`); default OpenAI's. */
  baseUrl?: string;
  /** The model name sent to the provider. */
  model?: string;
  /** The `codex` to run (the npm wrapper or the native binary); default loopgate's pinned one, then PATH. */
  codex?: string;
}

const OPENAI = "https://api.openai.com/v1";
/** The environment variable holding the provider key when the caller passes none (a local model-server takes any). */
const PLACEHOLDER_KEY = "LOOPGATE_CODEX_API_KEY";

/**
 * Codex as the builder: `codex exec --json` runs inside loopgate's bubblewrap sandbox, against a
 * provider declared in a private CODEX_HOME/config.toml (`wire_api = "responses"`) that loopgate
 * writes outside the workspace, beside the attempt's prompt. Codex's own sandbox is turned off
 * (`-s danger-full-access`): loopgate's sandbox is the boundary, and Codex's helper cannot nest in
 * it. The network is shared with the sandbox because Codex must reach its provider — that is the
 * only reason, and the builder descriptor and a note say so. Its JSONL becomes facts (commands
 * with exit codes, file changes, usage; origin agent_runtime) saved beside the prompt as
 * `codex-facts.json` and summarised in the builder's output; the final message is the claim.
 */
export function codexBuilder(options: CodexOptions = {}): Builder {
  const baseUrl = (options.baseUrl ?? OPENAI).replace(/\/+$/, "");
  const model = options.model ?? "gpt-5-codex";
  return {
    descriptor: {
      kind: "command",
      command: `codex exec --json (loopgate codex adapter: model ${model} at ${baseUrl}; network shared with the sandbox only so that codex reaches this provider)`,
    },
    preflight: () => (findCodex(options.codex) ? null : CODEX_MISSING),
    run: (ctx) => runCodex(ctx, baseUrl, model, options.codex),
  };
}

const DESCRIBED = /^codex exec --json \(loopgate codex adapter: model (\S+) at (\S+?); /;

/**
 * The Codex builder a recorded descriptor names (a resumed run re-runs the same adapter, model and
 * provider), or null when the descriptor is not the adapter's: a plain `--builder 'codex …'` stays a command.
 */
export function codexFromDescriptor(command: string | undefined): Builder | null {
  const m = DESCRIBED.exec(command ?? "");
  if (!m?.[1] || !m[2]) return null;
  return codexBuilder({ model: m[1], baseUrl: m[2] });
}

const CODEX_MISSING =
  "codex not found: install @openai/codex (loopgate's dev dependency pins it) or put codex on PATH";

/** The native codex binary and the folders it needs, from the npm wrapper, a native path, or PATH. */
export function findCodex(given?: string): { binary: string; mounts: string[]; path: string[] } | null {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
  const candidates = [
    given,
    join(root, "node_modules", ".bin", "codex"),
    resolveProgram("codex", process.cwd(), process.env.PATH ?? ""),
  ].filter((c): c is string => typeof c === "string" && existsSync(c));
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

/** config.toml of the private CODEX_HOME: one provider, nothing else of the user's configuration. */
export function codexConfig(baseUrl: string, model: string, envKey: string): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    `model = ${q(model)}`,
    'model_provider = "loopgate"',
    "",
    "[model_providers.loopgate]",
    'name = "loopgate provider"',
    `base_url = ${q(baseUrl)}`,
    `env_key = ${q(envKey)}`,
    'wire_api = "responses"',
    "",
  ].join("\n");
}

async function runCodex(
  ctx: BuilderContext,
  baseUrl: string,
  model: string,
  given: string | undefined,
): Promise<BuilderResult> {
  const codex = findCodex(given);
  if (!codex)
    return {
      exitCode: null,
      signal: null,
      timedOut: false,
      durationMs: 0,
      output: "",
      infrastructure: CODEX_MISSING,
    };
  const attemptDir = dirname(ctx.promptFile);
  const codexHome = join(attemptDir, "codex-home");
  await mkdir(codexHome, { recursive: true });
  const envKey = ctx.allowEnv.includes("OPENAI_API_KEY") ? "OPENAI_API_KEY" : PLACEHOLDER_KEY;
  await writeFile(join(codexHome, "config.toml"), codexConfig(baseUrl, model, envKey));
  if (!ctx.network)
    ctx.onNote?.(
      `codex: the network is shared with the builder's sandbox only so that codex reaches its provider at ${baseUrl}`,
    );
  const prompt = await readFile(ctx.promptFile, "utf8");
  const lastMessage = join(codexHome, "last-message.txt");
  const env = scrubbedEnv({
    home: "/tmp",
    allow: ctx.allowEnv,
    extra: {
      PATH: [...codex.path, SANDBOX_PATH].join(":"),
      CODEX_HOME: codexHome,
      LOOPGATE_RUN_ID: ctx.runId,
      LOOPGATE_ATTEMPT: String(ctx.attempt),
      ...(envKey === PLACEHOLDER_KEY ? { [PLACEHOLDER_KEY]: "unused-by-a-local-provider" } : {}),
    },
  });
  const argv = [
    codex.binary,
    "exec",
    "--json",
    "--skip-git-repo-check",
    "-s",
    "danger-full-access",
    "-C",
    ctx.workspace,
    "--output-last-message",
    lastMessage,
    prompt,
  ];
  let r: Awaited<ReturnType<typeof runSandboxed>>;
  try {
    r = await runSandboxed(
      {
        argv,
        cwd: ctx.workspace,
        writable: [ctx.workspace, codexHome],
        readonly: [...ctx.mounts, ...codex.mounts, attemptDir],
        ...(ctx.masked?.length ? { masked: ctx.masked } : {}),
        env,
        network: true,
        timeoutMs: ctx.timeoutMs,
        ...(ctx.limits ? { limits: ctx.limits } : {}),
        maxOutputBytes: 16_000,
        captureBytes: 8 * 1024 * 1024,
        ...(ctx.onOutput ? { onOutput: ctx.onOutput } : {}),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      },
      ctx.sandbox,
    );
  } catch (e) {
    return {
      exitCode: null,
      signal: null,
      timedOut: false,
      durationMs: 0,
      output: "",
      infrastructure: `codex could not start: ${(e as Error).message}`,
    };
  }
  const jsonl = r.streams?.stdout.toString("utf8") ?? r.output;
  const facts: CodexFacts = codexFacts(jsonl);
  await writeFile(join(attemptDir, "codex-events.jsonl"), jsonl);
  await writeFile(join(attemptDir, "codex-facts.json"), `${JSON.stringify(facts, null, 2)}\n`);
  // What Codex's runtime reported, as typed events of the run (its usage reaches the envelope's audit).
  for (const event of codexRuntimeEvents(facts, ctx.attempt, r.exitCode)) await ctx.onRuntimeFact?.(event);
  const stderr = r.streams?.stderr.toString("utf8").trim() ?? "";
  const said = facts.final_message;
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    durationMs: r.durationMs,
    // The facts first, the final message (the claim) last: the log keeps mostly the end.
    claim: said,
    output: `${describeFacts(facts)}${stderr && r.exitCode !== 0 ? `\ncodex stderr: ${stderr.slice(-1500)}` : ""}${said ? `\n\n${said}` : ""}`,
    infrastructure: r.spawnError ? `codex could not start: ${r.spawnError}` : null,
  };
}
