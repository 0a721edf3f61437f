/**
 * Mutated twins: for a held-out test file, copies of its tests whose expected value is changed to a wrong
 * value of the same shape, interleaved with the originals in the same file of the same run. Every real
 * test must pass and every twin must fail. Code under test that treats tests alike (always-pass
 * assertions, forged result frames, skips, answers read from the calling test's source) makes the twins
 * pass; to spare them it would have to tell a twin from its original, which differ only in that value.
 * See docs/explanation/tamper-checks.md.
 */

/** A test as its file defines it: the names of its enclosing suites or classes, then its own name. */
export type TestPath = readonly string[];

/** One place inside a test where an expected value is written as a literal, and wrong values of its shape. */
export interface MutationSite {
  /**
   * Stable within the test: which assertion (in source order) and which literal inside its expected
   * value, e.g. `2.0`. Equal keys in two analyses of the same file name the same literal.
   */
  key: string;
  /** The literal's source text. */
  original: string;
  /** Replacement source texts: each a different literal of the same shape (never equal to the original). */
  replacements: string[];
}

/** A test a file defines, with where its expectations can be changed (none: it gets no twin). */
export interface DefinedTest {
  path: TestPath;
  sites: MutationSite[];
  /** Why the test has no sites, when it has none (no literal expected value, a name made at run time, …). */
  note?: string;
}

/** One file's analysis: its tests, or why the file cannot be given twins at all. */
export type FileAnalysis = { ok: true; tests: DefinedTest[] } | { ok: false; why: string };

/** One twin to write: the test it copies, the literal it changes and to what, and its name. */
export interface TwinSpec {
  site: string;
  replacement: string;
  /** The twin's own name (the last element of its path; suites stay as they are). */
  name: string;
  /** Placed before the original rather than after it. */
  before: boolean;
}

/** What to write into one file: each chosen test is renamed and gets its twins. Other tests stay as they are. */
export interface RenderRequest {
  path: string;
  source: string;
  tests: { path: TestPath; name: string; twins: TwinSpec[] }[];
}

/** A rendered file, or why it could not be rendered (then the file is left as it was and gets no twins). */
export type RenderedFile = { ok: true; content: string } | { ok: false; why: string };

/** A language's reader and writer of test files. */
export interface TwinLanguage {
  id: "python" | "javascript";
  /** Whether a file (relative path) is one this language's analyser reads. */
  handles(path: string): boolean;
  /** A test name for the given fresh words, in the language's idiom (`test_weeks_edge_41`, `weeks edge 41`). */
  rename(name: string, words: readonly string[]): string;
  /** Analyses files (path relative to the gate environment, and content). */
  analyse(files: readonly { path: string; source: string }[]): Promise<Map<string, FileAnalysis>>;
  /** Renders files with the requested renames and twins; tests not named in a request are untouched. */
  render(requests: readonly RenderRequest[]): Promise<Map<string, RenderedFile>>;
}

/** The key of a test in maps and the lock: its file and path joined by `::`. */
export function testKey(file: string, path: TestPath): string {
  return [file, ...path].join("::");
}
