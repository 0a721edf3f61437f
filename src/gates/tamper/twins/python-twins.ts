import { execFile } from "node:child_process";
import { basename } from "node:path";
import { PYTHON_TWIN_SCRIPT } from "./python-script.js";
import type {
  DefinedTest,
  FileAnalysis,
  MutationSite,
  RenderedFile,
  RenderRequest,
  TwinLanguage,
} from "./twin.js";

/** The system's interpreter, never one a workspace or PATH could put first. */
const PYTHON = "/usr/bin/python3";
const TIMEOUT_MS = 60_000;
const OUTPUT_LIMIT = 64 * 1024 * 1024;

/** The script's answer for one file: whatever it wrote, checked before it is believed. */
type Answer = { ok: true; value: unknown[] } | { ok: false; why: string };

/** Runs the twin script on one request; every failure is a reason, never a throw. */
function runScript(request: object, expected: number): Promise<Answer> {
  return new Promise((done) => {
    // -I: no PYTHON* variables, no user site, no script folder on sys.path; -S: no site module.
    const child = execFile(
      PYTHON,
      ["-I", "-S", "-c", PYTHON_TWIN_SCRIPT],
      { env: {}, timeout: TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: OUTPUT_LIMIT, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error) {
          const tail = String(stderr).trim().split("\n").slice(-1)[0] ?? "";
          return done({ ok: false, why: `the Python twin script failed: ${error.message} ${tail}`.trim() });
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(String(stdout));
        } catch {
          return done({ ok: false, why: "the Python twin script wrote no JSON answer" });
        }
        const results = (parsed as { results?: unknown }).results;
        if (!Array.isArray(results) || results.length !== expected)
          return done({ ok: false, why: "the Python twin script answered for the wrong number of files" });
        done({ ok: true, value: results });
      },
    );
    child.stdin?.on("error", () => {}); // a child that died early is reported by the callback
    child.stdin?.end(JSON.stringify(request));
  });
}

const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === "string");

function site(x: unknown): MutationSite | null {
  const s = x as Partial<MutationSite> | null;
  if (!s || typeof s.key !== "string" || typeof s.original !== "string" || !isStrings(s.replacements))
    return null;
  return { key: s.key, original: s.original, replacements: s.replacements };
}

function definedTest(x: unknown): DefinedTest | null {
  const t = x as { path?: unknown; sites?: unknown; note?: unknown } | null;
  if (!t || !isStrings(t.path) || t.path.length === 0 || !Array.isArray(t.sites)) return null;
  const sites = t.sites.map(site);
  if (sites.some((s) => s === null)) return null;
  const out: DefinedTest = { path: t.path, sites: sites as MutationSite[] };
  if (typeof t.note === "string") out.note = t.note;
  return out;
}

function analysis(x: unknown): FileAnalysis {
  const a = x as { ok?: unknown; tests?: unknown; why?: unknown } | null;
  if (a?.ok === false) return { ok: false, why: typeof a.why === "string" ? a.why : "not analysed" };
  if (a?.ok !== true || !Array.isArray(a.tests)) return { ok: false, why: "a malformed analysis" };
  const tests = a.tests.map(definedTest);
  if (tests.some((t) => t === null)) return { ok: false, why: "a malformed analysis" };
  return { ok: true, tests: tests as DefinedTest[] };
}

function rendered(x: unknown): RenderedFile {
  const r = x as { ok?: unknown; content?: unknown; why?: unknown } | null;
  if (r?.ok === true && typeof r.content === "string") return { ok: true, content: r.content };
  return { ok: false, why: typeof r?.why === "string" ? r.why : "a malformed rendering" };
}

/** Python test files (pytest and unittest), read and rewritten with the standard library's `ast`. */
export const pythonTwins: TwinLanguage = {
  id: "python",
  handles(path: string): boolean {
    const name = basename(path);
    return name.endsWith(".py") && (name.startsWith("test") || name.endsWith("_test.py"));
  },
  rename(name: string, words: readonly string[]): string {
    return `${name}_${words.join("_")}`;
  },
  async analyse(files) {
    const answer = await runScript({ op: "analyse", files }, files.length);
    return new Map(
      files.map((f, i): [string, FileAnalysis] => [
        f.path,
        answer.ok ? analysis(answer.value[i]) : { ok: false, why: answer.why },
      ]),
    );
  },
  async render(requests: readonly RenderRequest[]) {
    const answer = await runScript({ op: "render", requests }, requests.length);
    return new Map(
      requests.map((r, i): [string, RenderedFile] => [
        r.path,
        answer.ok ? rendered(answer.value[i]) : { ok: false, why: answer.why },
      ]),
    );
  },
};
