import { InputError } from "../../core/kernel/errors.js";
import { providers } from "./ai-sdk.js";
import { aiSdkModel } from "./ai-sdk-model.js";
import type { ModelAdapter } from "./model.js";
import { recordingModel } from "./recording-model.js";
import { loadScriptedModel } from "./scripted-model.js";

export interface CreateModelOptions {
  /** Base URL of the provider's API: required for openai-compatible, optional (a proxy) otherwise. */
  baseUrl?: string;
  /** Where API keys and LOOPGATE_OPENAI_COMPATIBLE_BASE_URL are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Record every successful response to this file, in the scripted model format. */
  record?: string;
  /** For `scripted:` and `replay:`: start at this 0-based response (a resumed run). */
  position?: number;
}

/** The forms `--model` accepts, for error messages and help. */
export const MODEL_FORMS = [
  "anthropic:MODEL (needs ANTHROPIC_API_KEY)",
  "openai:MODEL (needs OPENAI_API_KEY)",
  "openai-compatible:MODEL with --base-url URL or LOOPGATE_OPENAI_COMPATIBLE_BASE_URL (Ollama, vLLM, llama.cpp; OPENAI_COMPATIBLE_API_KEY optional)",
  "scripted:FILE (a scripted model file)",
  "replay:FILE (a recorded session)",
] as const;

const FORMS_TEXT = `use one of:\n${MODEL_FORMS.map((f) => `  ${f}`).join("\n")}`;

/**
 * Builds the model a `--model` value names. Bad values, missing API keys and unreadable script
 * files are InputErrors that say what to do; nothing is sent to a provider here.
 */
export function createModel(spec: string, options: CreateModelOptions = {}): ModelAdapter {
  const model = createBaseModel(spec, options);
  return options.record === undefined ? model : recordingModel(model, options.record);
}

function createBaseModel(spec: string, options: CreateModelOptions): ModelAdapter {
  const env = options.env ?? process.env;
  const colon = spec.indexOf(":");
  const prefix = colon < 0 ? "" : spec.slice(0, colon);
  const name = colon < 0 ? "" : spec.slice(colon + 1).trim();
  const bad = (why: string) => new InputError(`${why}; ${FORMS_TEXT}`, "--model");
  if (colon < 0) throw bad(`"${spec}" names no provider`);
  if (name === "")
    throw bad(`"${spec}" names no ${prefix === "scripted" || prefix === "replay" ? "file" : "model"}`);
  const baseURL = options.baseUrl === undefined ? undefined : checkUrl(options.baseUrl, "--base-url");
  switch (prefix) {
    case "anthropic": {
      const apiKey = requireKey(env, "ANTHROPIC_API_KEY", spec);
      return aiSdkModel(
        spec,
        providers.anthropic().createAnthropic({ apiKey, ...(baseURL ? { baseURL } : {}) })(name),
      );
    }
    case "openai": {
      const apiKey = requireKey(env, "OPENAI_API_KEY", spec);
      // Chat Completions, not Responses: stateless, so nothing is stored at the provider and the
      // conversation loopgate sends is the whole conversation.
      return aiSdkModel(
        spec,
        providers
          .openai()
          .createOpenAI({ apiKey, ...(baseURL ? { baseURL } : {}) })
          .chat(name),
      );
    }
    case "openai-compatible": {
      const fromEnv = env.LOOPGATE_OPENAI_COMPATIBLE_BASE_URL;
      const url = baseURL ?? (fromEnv ? checkUrl(fromEnv, "LOOPGATE_OPENAI_COMPATIBLE_BASE_URL") : undefined);
      if (url === undefined)
        throw new InputError(
          `${spec} needs the server's base URL: pass --base-url (e.g. http://localhost:11434/v1 for Ollama) or set LOOPGATE_OPENAI_COMPATIBLE_BASE_URL`,
          "--model",
        );
      const apiKey = env.OPENAI_COMPATIBLE_API_KEY || undefined;
      const provider = providers.openaiCompatible().createOpenAICompatible({
        name: "openai-compatible",
        baseURL: url,
        includeUsage: true,
        ...(apiKey ? { apiKey } : {}),
      });
      // A local server's price is unknown (and any built-in price for a same-named model is wrong).
      return aiSdkModel(spec, provider.chatModel(name), null);
    }
    case "scripted":
    case "replay":
      return loadScriptedModel(name, withPosition(spec, options.position));
    default:
      throw bad(`unknown provider "${prefix}" in "${spec}"`);
  }
}

function withPosition(id: string, position: number | undefined): { id: string; position?: number } {
  return position === undefined ? { id } : { id, position };
}

function requireKey(env: NodeJS.ProcessEnv, variable: string, spec: string): string {
  const key = env[variable]?.trim();
  if (!key)
    throw new InputError(
      `${spec} needs the API key in the environment variable ${variable}, which is not set`,
      "--model",
    );
  return key;
}

function checkUrl(value: string, where: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return value.replace(/\/+$/, "");
  } catch {
    // reported below
  }
  throw new InputError(`"${value}" is not an http(s) URL`, where);
}
