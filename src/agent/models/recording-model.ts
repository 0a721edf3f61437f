import { renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import type { ModelAdapter, ModelResponse } from "./model.js";
import { describe, toModelFailure } from "./model-failure.js";
import { formatScript, type ScriptedResponse } from "./script-file.js";

/**
 * Wraps a model so that every successful response is recorded to `file` in the scripted model
 * format, replayable with `replay:FILE`. The whole file is rewritten atomically (temporary file +
 * rename) after each response, so a crash leaves a valid file holding every response so far.
 * The file holds this session's responses only: an existing file is replaced. Creating the
 * wrapper writes an empty script at once, so an unwritable path is reported before any request.
 */
export function recordingModel(inner: ModelAdapter, file: string): ModelAdapter {
  const recorded: ScriptedResponse[] = [];
  const header = `recorded by loopgate from ${inner.id}; replay with --model replay:${file}`;
  try {
    writeAtomically(file, formatScript(recorded, header));
  } catch (error) {
    throw new InputError(`cannot write the recording: ${describe(error)}`, file, { cause: error });
  }
  return {
    id: inner.id,
    async generate(request): Promise<ModelResponse> {
      let response: ModelResponse;
      try {
        response = await inner.generate(request);
      } catch (error) {
        return { ok: false, error: toModelFailure(error, request.signal) };
      }
      if (!response.ok) return response;
      try {
        recorded.push(toScripted(response));
        writeAtomically(file, formatScript(recorded, header));
      } catch (error) {
        // The response is not lost from the run (its events carry it), but the recording the
        // user asked for would be incomplete: fail the request rather than silently drop it.
        return {
          ok: false,
          error: {
            kind: "provider",
            retryable: false,
            message: `recording to ${file} failed: ${describe(error)}`,
          },
        };
      }
      return response;
    },
  };
}

function toScripted(response: Extract<ModelResponse, { ok: true }>): ScriptedResponse {
  return {
    text: response.text,
    tool_calls: response.toolCalls.map((call) => ({ id: call.id, name: call.name, args: call.args })),
    usage: {
      input_tokens: response.usage.inputTokens,
      output_tokens: response.usage.outputTokens,
      cost_usd: response.usage.costUsd,
    },
    finish_reason: response.finishReason,
  };
}

let counter = 0;

function writeAtomically(file: string, text: string): void {
  counter += 1;
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${counter}.tmp`);
  try {
    writeFileSync(temp, text, { flush: true });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
