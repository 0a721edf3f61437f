import { z } from "zod";
import { confinedFileOps } from "./confined-file-ops.js";
import type { FileOps, ListEntry } from "./file-ops.js";
import type { AgentTool, ToolContext } from "./tool.js";
import { refusalOr } from "./tool-errors.js";
import { resolveToolPath } from "./tool-path.js";
import { toolError, toolOk } from "./tool-result.js";

/** Entries scanned at most per call; the shallowest `limit` of them are shown. */
const SCAN_MAX = 20_000;
const OUTPUT_MAX_CHARS = 200_000;

const schema = z.strictObject({
  path: z.string().min(1).max(4096).optional().describe('Directory relative to the workspace (default ".").'),
  depth: z.number().int().min(1).max(10).optional().describe("How many levels to descend (default 3)."),
  limit: z.number().int().min(1).max(2000).optional().describe("Most entries to show (default 500)."),
});

function compareParts(a: string, b: string): number {
  const pa = a.split("/");
  const pb = b.split("/");
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i] ?? "";
    const y = pb[i] ?? "";
    if (x !== y) return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

function formatEntry(e: ListEntry): string {
  if (e.type === "dir") return `${e.path}/${e.pruned ? " (not expanded)" : ""}`;
  if (e.type === "symlink") return `${e.path} -> ${e.target}`;
  return e.type === "other" ? `${e.path} (special file)` : e.path;
}

/** Creates list_files over the given file operations (default: in process, confined to the workspace). */
export function createListFilesTool(
  opsFor: (ctx: ToolContext, workspace: string) => FileOps = confinedFileOps,
): AgentTool<typeof schema> {
  return {
    name: "list_files",
    description:
      "List the files and directories under a workspace directory, shallowest first, up to `depth` levels. " +
      "Directories end with '/', symlinks show '-> target' and are never followed; .git and node_modules " +
      "are listed but not expanded. Paths are relative to the listed directory.",
    schema,
    mutating: false,
    async execute(args, ctx) {
      const started = performance.now();
      const rel = args.path ?? ".";
      return refusalOr(rel, started, async () => {
        const p = await resolveToolPath(ctx.workspace, rel);
        const limit = args.limit ?? 500;
        const out = await opsFor(ctx, p.workspace).list(p.abs, args.depth ?? 3, SCAN_MAX);
        if (out.kind === "missing") return toolError(rel, `${p.display} does not exist`, started, 1);
        if (out.kind === "file")
          return toolError(rel, `${p.display} is a file, not a directory; use read_file`, started, 1);
        // Shallowest first, so a cut drops the deepest entries; then shown in tree order.
        const depthOf = (e: ListEntry) => e.path.split("/").length;
        const sorted = [...out.entries].sort(
          (a, b) => depthOf(a) - depthOf(b) || compareParts(a.path, b.path),
        );
        const shown = sorted.slice(0, limit).sort((a, b) => compareParts(a.path, b.path));
        const hidden = sorted.length - shown.length;
        let body = shown.map(formatEntry).join("\n");
        if (body.length > OUTPUT_MAX_CHARS) body = `${body.slice(0, OUTPUT_MAX_CHARS)}\n[… listing cut …]`;
        let header = `${p.display === "." ? "./" : `${p.display}/`} (${shown.length} entr${shown.length === 1 ? "y" : "ies"}`;
        if (hidden > 0 || !out.complete)
          header += `; ${hidden}${out.complete ? "" : "+"} more not shown: raise limit, lower depth or list a subdirectory`;
        return toolOk(rel, `${header})\n${body || "(empty)"}`, started);
      });
    },
  };
}

/** list_files, confined to the run workspace. */
export const listFilesTool = createListFilesTool();
