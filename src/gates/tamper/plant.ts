import { randomInt } from "node:crypto";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LockedTwin } from "../../core/task/task-lock.js";
import { listFiles } from "../../workspace/tree-files.js";
import type { EmittedTest } from "./identity.js";
import type { PlantedTwins } from "./identity-verdict.js";
import { plausibleName } from "./names.js";
import { type DefinedTest, type RenderRequest, type TwinLanguage, testKey } from "./twins/twin.js";

/** At most this many twins of one test in a recording run (`task check`), spread over its literals. */
const MAX_CANDIDATES = 6;

/** What planting twins did to one gate run. */
export interface TwinPlanting extends PlantedTwins {
  emitted: Map<string, EmittedTest>;
  twins: string[];
  /** Original test key → the keys it runs under (the renamed original, then its twins). */
  renamed: Map<string, string[]>;
  /** Why tests or files got no twin (recording only; for the lock and `task check`). */
  untwinned: string[];
}

/** Where the twins come from: the lock's recorded ones (one drawn per test), or every candidate (recording). */
export type TwinSource =
  | { mode: "enforce"; twins: Readonly<Record<string, readonly LockedTwin[]>> }
  | { mode: "record" };

/**
 * Rewrites the held-out test files in a fresh gate environment so each chosen test runs renamed, beside
 * its twins. Sources are read from the held-out folder (the task's own, trusted), never from the gate
 * environment; each rewritten file replaces the environment's entry (unlinked first: it may be a hard link
 * to the task's own file). Files no language reads, and tests without a twin, are left as they are.
 */
export async function plantTwins(input: {
  heldoutDir: string;
  gateEnv: string;
  source: TwinSource;
  languages: readonly TwinLanguage[];
}): Promise<TwinPlanting> {
  const { heldoutDir, gateEnv, source, languages } = input;
  const planting: TwinPlanting = { emitted: new Map(), twins: [], renamed: new Map(), untwinned: [] };
  const files = listFiles(heldoutDir);
  for (const language of languages) {
    const mine = files.filter((f) => language.handles(f));
    if (!mine.length) continue;
    const sources = mine.map((path) => ({ path, source: readFileSync(join(heldoutDir, path), "utf8") }));
    const requests: RenderRequest[] = [];
    if (source.mode === "record") {
      const analyses = await language.analyse(sources);
      for (const { path, source: text } of sources) {
        const a = analyses.get(path);
        if (!a) continue;
        if (!a.ok) {
          planting.untwinned.push(`${path}: ${a.why}`);
          continue;
        }
        const tests = a.tests.flatMap((t) => {
          const candidates = candidatesOf(t);
          if (!candidates.length) {
            planting.untwinned.push(
              `${testKey(path, t.path)}: ${t.note ?? "no literal expected value to change"}`,
            );
            return [];
          }
          return [requestFor(language, path, t.path, candidates, planting)];
        });
        if (tests.length) requests.push({ path, source: text, tests });
      }
    } else {
      for (const { path, source: text } of sources) {
        const tests = Object.entries(source.twins)
          .filter(([key]) => key.startsWith(`${path}::`))
          .map(([key, pool]) => {
            const testPath = key.slice(path.length + 2).split("::");
            const drawn = pool[randomInt(pool.length)];
            return requestFor(language, path, testPath, drawn ? [drawn] : [], planting);
          });
        if (tests.length) requests.push({ path, source: text, tests });
      }
    }
    if (!requests.length) continue;
    const rendered = await language.render(requests);
    for (const r of requests) {
      const out = rendered.get(r.path);
      if (!out?.ok) {
        // The file stays as the task wrote it: its tests run under their own names, without twins.
        forget(planting, r);
        planting.untwinned.push(`${r.path}: ${out?.why ?? "not rendered"}`);
        continue;
      }
      const dest = join(gateEnv, r.path);
      rmSync(dest, { force: true });
      writeFileSync(dest, out.content, { mode: statSync(join(heldoutDir, r.path)).mode & 0o777 });
    }
  }
  return planting;
}

/** A test's candidate twins: its sites' replacements, taken in turn so every literal is tried, at most MAX_CANDIDATES. */
function candidatesOf(t: DefinedTest): LockedTwin[] {
  const out: LockedTwin[] = [];
  for (let i = 0; out.length < MAX_CANDIDATES; i++) {
    let any = false;
    for (const s of t.sites) {
      const r = s.replacements[i];
      if (r === undefined) continue;
      any = true;
      if (out.length < MAX_CANDIDATES) out.push({ site: s.key, replacement: r });
    }
    if (!any) break;
  }
  return out;
}

/** One test's render request: renamed, with one twin per chosen replacement, each placed at random before or after. */
function requestFor(
  language: TwinLanguage,
  file: string,
  path: readonly string[],
  twins: readonly LockedTwin[],
  planting: TwinPlanting,
): RenderRequest["tests"][number] {
  const name = path.at(-1) ?? "";
  const suites = path.slice(0, -1);
  const original = testKey(file, path);
  const taken = new Set<string>();
  const fresh = () => {
    for (;;) {
      const n = language.rename(name, plausibleName(" ").split(" "));
      if (!taken.has(n)) {
        taken.add(n);
        return n;
      }
    }
  };
  const renamedAs = fresh();
  const emit = (n: string, e: EmittedTest) => {
    const key = testKey(file, [...suites, n]);
    planting.emitted.set(key, e);
    return key;
  };
  const keys = [emit(renamedAs, { original, twin: null })];
  const specs = twins.map((t) => {
    const twinName = fresh();
    const key = emit(twinName, { original, twin: { site: t.site, replacement: t.replacement } });
    planting.twins.push(key);
    keys.push(key);
    return { site: t.site, replacement: t.replacement, name: twinName, before: randomInt(2) === 1 };
  });
  planting.renamed.set(original, keys);
  return { path, name: renamedAs, twins: specs };
}

/** Undoes a request's bookkeeping when its file could not be rendered. */
function forget(planting: TwinPlanting, r: RenderRequest): void {
  for (const t of r.tests) {
    const original = testKey(r.path, t.path);
    for (const key of planting.renamed.get(original) ?? []) planting.emitted.delete(key);
    planting.renamed.delete(original);
  }
  const live = new Set(planting.emitted.keys());
  planting.twins = planting.twins.filter((k) => live.has(k));
}
