import { InputError } from "../../core/kernel/errors.js";
import type { Builder } from "../builder.js";
import { codexBuilder } from "./codex-builder.js";

/** `--agent codex[:MODEL]` (with `--base-url URL`): the external agent adapters loopgate has. */
export function agentAdapter(
  spec: string,
  flags: { "base-url"?: string },
  stopDeadlineSeconds?: number,
): Builder {
  const [name, ...rest] = spec.split(":");
  const model = rest.join(":");
  if (name !== "codex")
    throw new InputError(`expected codex or codex:MODEL, got ${JSON.stringify(spec)}`, "--agent");
  if (flags["base-url"] !== undefined && !/^https?:\/\/[^\s]+$/.test(flags["base-url"]))
    throw new InputError(`expected an http(s) URL, got ${JSON.stringify(flags["base-url"])}`, "--base-url");
  return codexBuilder({
    ...(model ? { model } : {}),
    ...(flags["base-url"] !== undefined ? { baseUrl: flags["base-url"] } : {}),
    ...(stopDeadlineSeconds !== undefined ? { stopDeadlineSeconds } : {}),
  });
}
