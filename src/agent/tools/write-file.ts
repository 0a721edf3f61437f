import { z } from "zod";
import { confinedFileOps } from "./confined-file-ops.js";
import type { FileOps } from "./file-ops.js";
import type { AgentTool, ToolContext } from "./tool.js";
import { refusalOr } from "./tool-errors.js";
import { lstatOrNull, resolveToolPath } from "./tool-path.js";
import { toolError, toolOk } from "./tool-result.js";

const schema = z.strictObject({
  path: z.string().min(1).max(4096).describe("File path relative to the workspace."),
  content: z.string().max(1_000_000).describe("The complete new content of the file."),
});

/** Creates write_file over the given file operations (default: in process, confined to the workspace). */
export function createWriteFileTool(
  opsFor: (ctx: ToolContext, workspace: string) => FileOps = confinedFileOps,
): AgentTool<typeof schema> {
  return {
    name: "write_file",
    description:
      "Create or overwrite a file in the workspace with the given content (at most 1 MB); missing parent " +
      "directories are created. Paths are relative to the workspace. For a small change to an existing " +
      "file, prefer edit_file.",
    schema,
    mutating: true,
    async execute(args, ctx) {
      const started = performance.now();
      return refusalOr(args.path, started, async () => {
        const p = await resolveToolPath(ctx.workspace, args.path);
        const before = lstatOrNull(p.abs);
        if (before?.isDirectory()) return toolError(args.path, `${p.display} is a directory`, started);
        const data = Buffer.from(args.content, "utf8");
        await opsFor(ctx, p.workspace).write(p.abs, data);
        return toolOk(
          args.path,
          `${before ? "overwrote" : "created"} ${p.display} (${data.length} bytes)`,
          started,
        );
      });
    },
  };
}

/** write_file, confined to the run workspace. */
export const writeFileTool = createWriteFileTool();
