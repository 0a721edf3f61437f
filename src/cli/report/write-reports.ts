import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import type { Envelope } from "../../core/run/envelope.js";
import { renderJunit } from "./junit.js";
import { renderMarkdown } from "./markdown.js";

/** Where `--junit FILE` and `--markdown FILE` asked for the reports. */
export interface ReportTargets {
  junit?: string;
  markdown?: string;
}

/** The report files asked for, from the flags (an empty value is refused, naming the flag). */
export function reportTargets(flags: { junit?: string; markdown?: string }): ReportTargets {
  for (const f of ["junit", "markdown"] as const)
    if (flags[f] !== undefined && flags[f].trim() === "") throw new InputError("needs a file name", `--${f}`);
  return {
    ...(flags.junit !== undefined ? { junit: resolve(flags.junit) } : {}),
    ...(flags.markdown !== undefined ? { markdown: resolve(flags.markdown) } : {}),
  };
}

/** Writes the reports asked for (parent folders created); returns the files written. */
export async function writeReports(env: Envelope, targets: ReportTargets): Promise<string[]> {
  const written: string[] = [];
  const jobs: [string | undefined, () => string, string][] = [
    [targets.junit, () => renderJunit(env), "--junit"],
    [targets.markdown, () => renderMarkdown(env), "--markdown"],
  ];
  for (const [file, render, flag] of jobs) {
    if (!file) continue;
    try {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, render());
    } catch (e) {
      throw new InputError(`cannot write ${file}: ${e instanceof Error ? e.message : String(e)}`, flag);
    }
    written.push(file);
  }
  return written;
}
