import { z } from "zod";
import { confinedFileOps } from "./confined-file-ops.js";
import type { FileOps } from "./file-ops.js";
import type { AgentTool, ToolContext } from "./tool.js";
import { refusalOr } from "./tool-errors.js";
import { resolveToolPath } from "./tool-path.js";
import { toolError, toolOk } from "./tool-result.js";

/** Bytes of file text one read returns at most; the model continues with offset_line. */
export const READ_MAX_BYTES = 50_000;
const DEFAULT_LINES = 2000;

const schema = z.strictObject({
  path: z.string().min(1).max(4096).describe("File path relative to the workspace."),
  offset_line: z
    .number()
    .int()
    .min(1)
    .max(1_000_000_000)
    .optional()
    .describe("First line to show (1-based)."),
  limit_lines: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .optional()
    .describe(`Lines to show (default ${DEFAULT_LINES}).`),
});

/** Creates read_file over the given file operations (default: in process, confined to the workspace). */
export function createReadFileTool(
  opsFor: (ctx: ToolContext, workspace: string) => FileOps = confinedFileOps,
): AgentTool<typeof schema> {
  return {
    name: "read_file",
    description:
      "Read a text file in the workspace. Paths are relative to the workspace. Returns up to " +
      `${DEFAULT_LINES} lines (or ${READ_MAX_BYTES} bytes) starting at offset_line, with a header giving ` +
      "the line range and the file's total lines; read further with offset_line. Binary files are not shown.",
    schema,
    mutating: false,
    async execute(args, ctx) {
      const started = performance.now();
      const subject = args.path;
      return refusalOr(subject, started, async () => {
        const p = await resolveToolPath(ctx.workspace, args.path);
        const offset = args.offset_line ?? 1;
        const out = await opsFor(ctx, p.workspace).read(p.abs, {
          offsetLine: offset,
          maxBytes: READ_MAX_BYTES,
        });
        if (out.kind === "missing") return toolError(subject, `${p.display} does not exist`, started, 1);
        if (out.kind === "directory")
          return toolError(
            subject,
            `${p.display} is a directory; use list_files to see its entries`,
            started,
            1,
          );
        if (out.kind === "other") return toolError(subject, `${p.display} is not a regular file`, started, 1);
        if (out.kind === "unreadable") return toolError(subject, `${p.display} is not readable`, started, 1);
        if (out.size === 0) return toolOk(subject, `${p.display}: empty file (0 bytes)`, started);
        if (out.bytes.includes(0))
          return toolOk(subject, `${p.display}: binary file (${out.size} bytes), not shown`, started);
        if (out.bytes.length === 0)
          return toolError(
            subject,
            `offset_line ${offset} is past the end of ${p.display} (${out.totalLines} lines)`,
            started,
            1,
          );
        const text = out.bytes.toString("utf8");
        const more = out.bytes.length >= READ_MAX_BYTES; // bytes may follow the slice
        const lines = text.split("\n");
        if (text.endsWith("\n")) lines.pop();
        let lineCut = more && !text.endsWith("\n"); // the last line is incomplete
        const limit = args.limit_lines ?? DEFAULT_LINES;
        if (lines.length > limit) {
          lines.length = limit;
          lineCut = false;
        } else if (lineCut && lines.length > 1) {
          lines.pop(); // keep whole lines; only a single over-long line is shown cut
          lineCut = false;
        }
        const last = offset + lines.length - 1;
        let header = `${p.display}: lines ${offset}-${last} of ${out.totalLines}`;
        if (lineCut)
          header += ` (line ${offset} cut at ${READ_MAX_BYTES} bytes; use bash to read it in parts)`;
        else if (last < out.totalLines)
          header += `${more && lines.length < limit ? ` (cut at ${READ_MAX_BYTES} bytes)` : ""}; continue with offset_line ${last + 1}`;
        return toolOk(subject, `${header}\n${lines.join("\n")}`, started);
      });
    },
  };
}

/** read_file, confined to the run workspace. */
export const readFileTool = createReadFileTool();
