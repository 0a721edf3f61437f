import { z } from "zod";
import { confinedFileOps } from "./confined-file-ops.js";
import { nearestMatchHint, occurrenceLines } from "./edit-hint.js";
import type { FileOps } from "./file-ops.js";
import type { AgentTool, ToolContext } from "./tool.js";
import { refusalOr } from "./tool-errors.js";
import { resolveToolPath } from "./tool-path.js";
import { toolError, toolOk } from "./tool-result.js";

/** The largest file edit_file rewrites; bigger files are edited with bash (sed, patch). */
export const EDIT_MAX_BYTES = 4_000_000;

const schema = z.strictObject({
  path: z.string().min(1).max(4096).describe("File path relative to the workspace."),
  old_text: z.string().min(1).max(1_000_000).describe("Exact text to replace, including whitespace."),
  new_text: z.string().max(1_000_000).describe("Replacement text."),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of requiring exactly one."),
});

/** Creates edit_file over the given file operations (default: in process, confined to the workspace). */
export function createEditFileTool(
  opsFor: (ctx: ToolContext, workspace: string) => FileOps = confinedFileOps,
): AgentTool<typeof schema> {
  return {
    name: "edit_file",
    description:
      "Replace exact text in a workspace file. old_text must match the file exactly (whitespace and line " +
      "breaks included) and occur exactly once, unless replace_all is true; include enough surrounding " +
      "lines to make it unique. Read the file first. Paths are relative to the workspace.",
    schema,
    mutating: true,
    async execute(args, ctx) {
      const started = performance.now();
      const subject = args.path;
      return refusalOr(subject, started, async () => {
        const p = await resolveToolPath(ctx.workspace, args.path);
        const ops = opsFor(ctx, p.workspace);
        const out = await ops.read(p.abs, { offsetLine: 1, maxBytes: EDIT_MAX_BYTES + 1 });
        if (out.kind !== "file") {
          const why =
            out.kind === "missing" ? "does not exist (use write_file to create it)" : `is ${out.kind}`;
          return toolError(subject, `${p.display} ${why}`, started, 1);
        }
        if (out.size > EDIT_MAX_BYTES)
          return toolError(
            subject,
            `${p.display} is too large to edit (${out.size} bytes); use bash`,
            started,
            1,
          );
        let text: string;
        try {
          if (out.bytes.includes(0)) throw new Error("binary");
          text = new TextDecoder("utf-8", { fatal: true }).decode(out.bytes);
        } catch {
          return toolError(
            subject,
            `${p.display} is not a UTF-8 text file; use bash to change it`,
            started,
            1,
          );
        }
        if (args.old_text === args.new_text)
          return toolError(subject, "old_text and new_text are identical: nothing to change", started);
        const at = occurrenceLines(text, args.old_text);
        if (at.length === 0)
          return toolError(
            subject,
            `old_text not found in ${p.display}: ${nearestMatchHint(text, args.old_text)}`,
            started,
            1,
          );
        if (at.length > 1 && !args.replace_all)
          return toolError(
            subject,
            `old_text occurs ${at.length} times in ${p.display} (lines ${lineList(at)}); include more ` +
              "surrounding text to make it unique, or set replace_all: true",
            started,
            1,
          );
        const updated = text.split(args.old_text).join(args.new_text);
        await ops.write(p.abs, Buffer.from(updated, "utf8"));
        const n = at.length;
        return toolOk(
          subject,
          `replaced ${n} occurrence${n === 1 ? "" : "s"} in ${p.display} (line${n === 1 ? "" : "s"} ${lineList(at)})`,
          started,
        );
      });
    },
  };
}

function lineList(lines: number[]): string {
  const shown = lines.slice(0, 20).join(", ");
  return lines.length > 20 ? `${shown} and ${lines.length - 20} more` : shown;
}

/** edit_file, confined to the run workspace. */
export const editFileTool = createEditFileTool();
