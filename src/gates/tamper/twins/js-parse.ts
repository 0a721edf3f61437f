/** Parsing JavaScript and TypeScript test files with @babel/parser (read only, never run). */
import type { ParserPlugin } from "@babel/parser";
import type { File, Node } from "@babel/types";
import { babelParser } from "./babel-parser.js";

/** The file names this reader handles: JavaScript and TypeScript, with or without JSX. */
export const JS_FILE = /\.(?:[cm]?[jt]s|[jt]sx)$/;

/** A parsed file, or why it could not be parsed (with the line and column babel names). */
export type Parsed = { ok: true; ast: File } | { ok: false; why: string };

/** The syntax plugins a file's extension calls for. */
function pluginsFor(path: string): ParserPlugin[] {
  if (/\.tsx$/.test(path)) return ["typescript", "jsx"];
  if (/\.[cm]?ts$/.test(path)) return ["typescript"];
  if (/\.jsx$/.test(path)) return ["jsx"];
  return [];
}

function tryParse(source: string, plugins: ParserPlugin[]): File {
  return babelParser().parse(source, {
    sourceType: "unambiguous",
    errorRecovery: false,
    plugins,
    // Test files that node or a bundler accepts: top-level await without an import, a CommonJS return.
    allowAwaitOutsideFunction: true,
    allowReturnOutsideFunction: true,
  });
}

/** Parses a file by its extension. A plain `.js` file that fails is tried once more with JSX, as React projects write it. */
export function parseFile(path: string, source: string): Parsed {
  const plugins = pluginsFor(path);
  try {
    return { ok: true, ast: tryParse(source, plugins) };
  } catch (e) {
    if (/\.[cm]?js$/.test(path)) {
      try {
        return { ok: true, ast: tryParse(source, ["jsx"]) };
      } catch {
        // Report the first error: the file is JavaScript first.
      }
    }
    return { ok: false, why: `does not parse: ${e instanceof Error ? e.message : String(e)}` };
  }
}

// Position and comment bookkeeping that babel keeps on nodes: never a child to walk.
const NOT_CHILDREN = new Set([
  "type",
  "start",
  "end",
  "loc",
  "range",
  "extra",
  "leadingComments",
  "trailingComments",
  "innerComments",
  "comments",
  "tokens",
]);

function isNode(v: unknown): v is Node {
  return typeof v === "object" && v !== null && typeof (v as { type?: unknown }).type === "string";
}

/** A node's child nodes, in the order babel stores them. */
export function childNodes(node: Node): Node[] {
  const out: Node[] = [];
  for (const [k, v] of Object.entries(node)) {
    if (NOT_CHILDREN.has(k)) continue;
    if (Array.isArray(v)) {
      for (const x of v) if (isNode(x)) out.push(x);
    } else if (isNode(v)) out.push(v);
  }
  return out;
}

/** A node's start and end offsets (babel always sets them on parsed nodes). */
export function span(node: Node): { start: number; end: number } {
  return { start: node.start ?? 0, end: node.end ?? 0 };
}
