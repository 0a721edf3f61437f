import { InputError } from "../../core/kernel/errors.js";
import type { ModelAdapter, ModelRequest, ModelResponse, ToolCall } from "./model.js";
import { toModelFailure } from "./model-failure.js";
import {
  loadScript,
  type ScriptedResponse,
  type ScriptedResponseInput,
  ScriptedResponseSchema,
} from "./script-file.js";

/** A model that plays back an ordered list of responses, for tests, demos, benchmarks and replay. */
export interface ScriptedModel extends ModelAdapter {
  /** Every request it was asked, in order (messages copied at the time of the call). */
  readonly requests: readonly ModelRequest[];
  /** How many responses of the script have been consumed, counting `position`. */
  readonly position: number;
  /** How many responses the script holds. */
  readonly length: number;
}

export interface ScriptedModelOptions {
  /** Start at this 0-based response (a resumed run that already consumed `position` responses). */
  position?: number;
}

/**
 * A scripted model: response k answers the k-th request. Tool call ids are deterministic,
 * `call_<step>_<index>` with the 1-based number of the response and the 0-based index of the
 * call in it, unless the script gives an id (recordings do). Asked for more responses than it
 * has, it fails loudly with a `script_exhausted` failure instead of pretending the model stopped.
 */
export function scriptedModel(
  responses: readonly ScriptedResponseInput[],
  id = "scripted",
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const script: ScriptedResponse[] = responses.map((r, i) => {
    const parsed = ScriptedResponseSchema.safeParse(r);
    if (!parsed.success)
      throw new InputError(`response ${i + 1}: ${parsed.error.issues[0]?.message ?? "invalid"}`, id);
    return parsed.data;
  });
  const start = options.position ?? 0;
  if (!Number.isInteger(start) || start < 0 || start > script.length)
    throw new InputError(`position ${start} is outside the script, which has ${script.length} responses`, id);
  let position = start;
  const requests: ModelRequest[] = [];
  return {
    id,
    get requests() {
      return requests;
    },
    get position() {
      return position;
    },
    get length() {
      return script.length;
    },
    async generate(request): Promise<ModelResponse> {
      try {
        requests.push({ ...request, messages: [...request.messages], tools: [...request.tools] });
      } catch (error) {
        return { ok: false, error: toModelFailure(error) };
      }
      if (request.signal?.aborted)
        return { ok: false, error: { kind: "timeout", retryable: false, message: "model request aborted" } };
      const step = position;
      const response = script[step];
      if (response === undefined)
        return {
          ok: false,
          error: {
            kind: "script_exhausted",
            retryable: false,
            message: `scripted model: asked for response ${script.length + 1} but the script has ${script.length}`,
          },
        };
      position += 1;
      return toModelResponse(response, step + 1);
    },
  };
}

/** Loads a scripted model file (`scripted:FILE`, `replay:FILE`); errors name file:line and field. */
export function loadScriptedModel(
  path: string,
  options: ScriptedModelOptions & { id?: string } = {},
): ScriptedModel {
  const { id, ...rest } = options;
  return scriptedModel(loadScript(path), id ?? `scripted:${path}`, rest);
}

function toModelResponse(response: ScriptedResponse, step: number): ModelResponse {
  const toolCalls: ToolCall[] = response.tool_calls.map((call, index) => ({
    id: call.id ?? `call_${step}_${index}`,
    name: call.name,
    args: call.args,
  }));
  const usage = response.usage;
  return {
    ok: true,
    text: response.text,
    toolCalls,
    usage: {
      inputTokens: usage?.input_tokens ?? 0,
      outputTokens: usage?.output_tokens ?? 0,
      costUsd: usage?.cost_usd === undefined ? 0 : usage.cost_usd,
    },
    finishReason: response.finish_reason ?? (toolCalls.length > 0 ? "tool-calls" : "stop"),
  };
}
