import { readFileSync } from "node:fs";
import { LineCounter, stringify } from "yaml";
import { z } from "zod";
import { formatPath, InputError } from "../../core/kernel/errors.js";
import { lineOf, parseYamlSource } from "../../core/kernel/yaml-source.js";

const toolCallSchema = z
  .object({
    /** Optional: a recorded session keeps the provider's ids; otherwise `call_<step>_<index>`. */
    id: z.string().min(1).optional(),
    name: z.string().min(1, "a tool call needs the tool's name"),
    /** Any JSON: arguments are not validated here, so a script can send bad ones on purpose. */
    args: z.unknown().default({}),
  })
  .strict();

/** One model response of a scripted model file (docs/reference/model-server.md, the scripted model file). */
export const ScriptedResponseSchema = z
  .object({
    text: z.string().default(""),
    tool_calls: z.array(toolCallSchema).default([]),
    usage: z
      .object({
        input_tokens: z.number().int().nonnegative(),
        output_tokens: z.number().int().nonnegative(),
        /** Kept by recordings; a script costs nothing, so the default is 0. */
        cost_usd: z.number().nonnegative().nullable().optional(),
      })
      .strict()
      .optional(),
    /** Defaults to "tool-calls" when the response calls tools, else "stop". */
    finish_reason: z.string().min(1).optional(),
  })
  .strict();

export type ScriptedResponse = z.infer<typeof ScriptedResponseSchema>;
/** What a script author may write: every field optional. */
export type ScriptedResponseInput = z.input<typeof ScriptedResponseSchema>;

const listSchema = z.array(ScriptedResponseSchema);
const mappingSchema = z.object({ responses: listSchema }).strict();

const SHAPE =
  "a scripted model file is a list of responses (or a mapping with `responses:`), each with optional text, tool_calls: [{name, args}] and usage: {input_tokens, output_tokens}";

/**
 * Parses a scripted model file's text (YAML or JSON). Errors name the file, the line and the
 * field: `fix.yaml:7: [1].tool_calls[0].name: ...`.
 */
export function parseScript(text: string, file: string): ScriptedResponse[] {
  const lineCounter = new LineCounter();
  const { doc, raw } = parseYamlSource(text, file, lineCounter);
  const isMapping = raw !== null && typeof raw === "object" && !Array.isArray(raw);
  if (!Array.isArray(raw) && !isMapping) throw new InputError(SHAPE, file);
  const result = isMapping ? mappingSchema.safeParse(raw) : listSchema.safeParse(raw);
  if (result.success) return Array.isArray(result.data) ? result.data : result.data.responses;
  const issues = result.error.issues;
  const messages = issues.slice(0, 5).map((issue) => {
    // An unknown key is reported on its own line, not on the line of the mapping that holds it.
    const unknownKey = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
    const at = unknownKey === undefined ? issue.path : [...issue.path, unknownKey];
    const line = lineOf(doc, at, lineCounter, unknownKey !== undefined);
    return `${line ? `${file}:${line}` : file}: ${formatPath(issue.path)}: ${issue.message}`;
  });
  const more = issues.length > 5 ? `\n(and ${issues.length - 5} more)` : "";
  throw new InputError(`invalid scripted model file (${SHAPE})\n${messages.join("\n")}${more}`);
}

/** Reads and parses a scripted model file; a missing or unreadable file is an InputError naming it. */
export function loadScript(path: string): ScriptedResponse[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
    throw new InputError(`cannot read the scripted model file: ${reason}`, path, { cause: error });
  }
  return parseScript(text, path);
}

/** A script as YAML text that `parseScript` reads back to the same responses. */
export function formatScript(responses: readonly ScriptedResponse[], header?: string): string {
  const comment = header ? `${header.replace(/^/gm, "# ")}\n` : "";
  return `${comment}${stringify({ responses }, { lineWidth: 0 })}`;
}
