import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { relative, resolve } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** A test file as the sequencer sees it: its wall time, and whether it mostly waits rather than computes. */
export interface Timed {
  wall: number;
  waits: boolean;
}

/**
 * Orders the whole suite longest file first, across the unit, int and e2e projects, by the wall times in
 * test/durations.json (scripts/test-durations.ts writes it from a run's report). With a few workers this
 * packs the run as tightly as one can without knowing more: no long file starts late and runs alone at the
 * end. A file the table does not know yet is taken to be a long one, so it starts early too.
 *
 * Some long files mostly wait (leases to expire, a monitor's cadence), and longest-first started three of
 * them together: the first 40 s of a run were half idle. test/cpu-seconds.json (the CPU each file used,
 * its processes included) says which files wait; the order is that of a simulated run in which no more
 * waiting files run at once than the workers the cores leave over (three workers on two cores: one), while
 * a computing one is left to start (`packed`).
 */
export class LongestFirst extends BaseSequencer {
  static readonly UNKNOWN_S = 30;
  /**
   * A file that used less than this share of one core over its wall time is a waiting one. Both are taken
   * from a whole run, where three workers share two cores: the average file used 0.37 of a core; the ones
   * that mostly wait (a monitor's cadence, leases, a provider that never answers) used 0.04 to 0.2.
   */
  static readonly WAITING_SHARE = 0.2;
  /** How many files run at once (vitest.config.ts sets it with maxWorkers). */
  static workers = 3;
  private readonly seconds: Record<string, number> = readTable("durations.json");
  private readonly cpu: Record<string, number> = readTable("cpu-seconds.json");

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = resolve(import.meta.dirname, "..", "..");
    const timed = files.map((f) => {
      const key = relative(root, f.moduleId);
      const wall = this.seconds[key] ?? LongestFirst.UNKNOWN_S;
      const cpu = this.cpu[key];
      return { f, wall, waits: cpu !== undefined && cpu < wall * LongestFirst.WAITING_SHARE };
    });
    timed.sort((a, b) => b.wall - a.wall || a.f.moduleId.localeCompare(b.f.moduleId));
    // As many waiting files at once as there are workers beyond one per core, at least one.
    const waitingSlots = Math.max(1, LongestFirst.workers - availableParallelism());
    return packed(timed, LongestFirst.workers, waitingSlots).map((t) => t.f);
  }
}

/**
 * The order in which `workers` workers take `items` (sorted longest first) in a simulated run where each
 * takes its wall time: always the next in line, except that while `waitingSlots` waiting items run, the
 * first computing item in line goes before the next waiting one (none left: the waiting one goes).
 */
export function packed<T extends Timed>(items: readonly T[], workers: number, waitingSlots: number): T[] {
  const line = [...items];
  const running: { end: number; waits: boolean }[] = [];
  const order: T[] = [];
  let now = 0;
  while (line.length > 0) {
    if (running.length >= workers) {
      running.sort((a, b) => a.end - b.end);
      now = (running.shift() as { end: number }).end;
      continue;
    }
    const waiting = running.filter((r) => r.waits).length;
    const computing = waiting >= waitingSlots ? line.findIndex((t) => !t.waits) : 0;
    const [next] = line.splice(Math.max(0, computing), 1) as [T];
    order.push(next);
    running.push({ end: now + next.wall, waits: next.waits });
  }
  return order;
}

function readTable(name: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(resolve(import.meta.dirname, "..", name), "utf8"));
  } catch {
    return {};
  }
}
