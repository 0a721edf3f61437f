import { readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Orders the whole suite longest file first, across the unit, int and e2e projects, by the wall times in
 * test/durations.json (scripts/test-durations.ts writes it from a run's report). With a few workers this
 * packs the run as tightly as one can without knowing more: no long file starts late and runs alone at the
 * end. A file the table does not know yet is taken to be a long one, so it starts early too.
 */
export class LongestFirst extends BaseSequencer {
  static readonly UNKNOWN_S = 30;
  private readonly seconds: Record<string, number> = readDurations();

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = resolve(import.meta.dirname, "..", "..");
    const weight = (f: TestSpecification) =>
      this.seconds[relative(root, f.moduleId)] ?? LongestFirst.UNKNOWN_S;
    return [...files].sort((a, b) => weight(b) - weight(a) || a.moduleId.localeCompare(b.moduleId));
  }
}

function readDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(resolve(import.meta.dirname, "..", "durations.json"), "utf8"));
  } catch {
    return {};
  }
}
