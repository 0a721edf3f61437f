import { isMap, isSeq, type LineCounter } from "yaml";

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
