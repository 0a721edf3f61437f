import type { Builder } from "../builder.js";
import { CodexBuilder } from "./codex-session.js";

export { findCodex } from "./codex-find.js";
export { codexConfig } from "./codex-home.js";

/** How the Codex builder reaches its model. */
export interface CodexOptions {
  /** The provider's Responses API base URL (`…/v1`); default OpenAI's. */
  baseUrl?: string;
  /** The model name sent to the provider. */
  model?: string;
  /** The `codex` to run (the npm wrapper or the native binary); default $LOOPGATE_CODEX_BIN, loopgate's pinned one, then PATH. */
  codex?: string;
  /** How long one Stop may wait for the gates, in seconds (default 600; `run` derives it from the task's gates). */
  stopDeadlineSeconds?: number;
}

const OPENAI = "https://api.openai.com/v1";

/**
 * Codex as the builder: `codex exec --json` runs inside loopgate's bubblewrap sandbox, against a
 * provider declared in a private CODEX_HOME/config.toml (`wire_api = "responses"`) that loopgate
 * writes outside the workspace, with loopgate's Stop hook beside it (codex-session.ts). Codex's own
 * sandbox is turned off (`-s danger-full-access`): loopgate's sandbox is the boundary, and Codex's
 * helper cannot nest in it. The network is shared with the sandbox because Codex must reach its
 * provider — that is the only reason, and the builder descriptor and a note say so. Its JSONL becomes
 * facts (commands with exit codes, file changes, usage; origin agent_runtime) saved beside the prompt
 * as `codex-facts.json` and summarised in the builder's output; the final message is the claim.
 */
export function codexBuilder(options: CodexOptions = {}): CodexBuilder {
  const baseUrl = (options.baseUrl ?? OPENAI).replace(/\/+$/, "");
  const model = options.model ?? "gpt-5-codex";
  return new CodexBuilder({
    baseUrl,
    model,
    ...(options.codex !== undefined ? { codex: options.codex } : {}),
    stopDeadlineSeconds: options.stopDeadlineSeconds ?? 600,
    descriptor: {
      kind: "command",
      command: `codex exec --json (loopgate codex adapter: model ${model} at ${baseUrl}; network shared with the sandbox only so that codex reaches this provider)`,
    },
  });
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
