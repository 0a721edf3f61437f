import { createRequire } from "node:module";

type BabelParser = typeof import("@babel/parser");

let parser: BabelParser | undefined;

/**
 * @babel/parser, loaded the first time a JavaScript or TypeScript test is read: every command that loads the
 * gates would otherwise load it (about 18 ms of CPU), and most runs have no such test to twin.
 */
export function babelParser(): BabelParser {
  parser ??= createRequire(import.meta.url)("@babel/parser") as BabelParser;
  return parser;
}
