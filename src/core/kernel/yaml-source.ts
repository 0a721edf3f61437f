import { type Document, isMap, isSeq, type LineCounter, parseDocument, visit } from "yaml";
import { InputError } from "./errors.js";

/**
 * The 1-based line of the deepest node on `path` that exists in a parsed YAML/JSON document, so a
 * validation error can name `file:line` as well as the field.
 */
export function lineOf(
  doc: { contents: unknown },
  path: readonly PropertyKey[],
  counter: LineCounter,
  /** Point at the last key itself rather than its value (for an unknown key). */
  atKey = false,
): number | null {
  const lineAt = (n: unknown) => {
    const range = (n as { range?: [number, number, number] } | null)?.range;
    return range ? counter.linePos(range[0]).line : null;
  };
  let node: unknown = doc.contents;
  let best = lineAt(node);
  for (const [i, key] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === key);
      if (!pair) break;
      node = atKey && i === path.length - 1 ? pair.key : (pair.value ?? pair.key);
      best = lineAt(node) ?? best;
    } else if (isSeq(node) && typeof key === "number") {
      node = node.items[key];
      best = lineAt(node) ?? best;
    } else break;
  }
  return best;
}

/**
 * Parses YAML/JSON text into its document and plain value, or throws InputError naming `file:line`:
 * a syntax error, or a limit of the parser (an alias bomb past yaml's `maxAliasCount`, nesting too deep
 * for the stack). `what` names the kind of file in the message ("YAML", "JSON or YAML").
 */
export function parseYamlSource(
  text: string,
  file: string,
  lineCounter: LineCounter,
  what = "YAML",
): { doc: Document.Parsed; raw: unknown } {
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const firstError = doc.errors[0];
  if (firstError) {
    const line = lineCounter.linePos(firstError.pos[0]).line;
    throw new InputError(`not valid ${what}: ${firstError.message.split("\n")[0]}`, `${file}:${line}`);
  }
  try {
    return { doc, raw: doc.toJS() };
  } catch (e) {
    // yaml throws ReferenceError for an alias bomb and RangeError when nesting blows the stack.
    const message = e instanceof Error ? e.message.split("\n")[0] : String(e);
    const line = firstAliasLine(doc, lineCounter);
    throw new InputError(
      `the YAML parser refuses to expand this file (${message}); use fewer aliases (*name) or less nesting`,
      line ? `${file}:${line}` : file,
      { cause: e },
    );
  }
}

/** The line of the document's first alias (`*name`), where an alias bomb starts. */
function firstAliasLine(doc: Document.Parsed, counter: LineCounter): number | null {
  let line: number | null = null;
  visit(doc, {
    Alias(_, node) {
      if (node.range) line = counter.linePos(node.range[0]).line;
      return visit.BREAK;
    },
  });
  return line;
}
