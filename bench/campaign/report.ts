// The campaign's printed table: one row per cell (store · builder · workers) and a total.
import type { Cell, CycleOutcome } from "./cycle.js";

export interface Tally {
  kills: number;
  fault: number;
  signal: number;
  inDoubt: number;
  corrupted: number;
  lost: number;
  blind: number;
  notResumable: number;
  resumed: number;
  equal: number;
}

export const emptyTally = (): Tally => ({
  kills: 0,
  fault: 0,
  signal: 0,
  inDoubt: 0,
  corrupted: 0,
  lost: 0,
  blind: 0,
  notResumable: 0,
  resumed: 0,
  equal: 0,
});

/** Adds one delivered kill's outcome: each column counts kills (or runs) with at least one problem of its kind. */
export function add(t: Tally, how: "fault" | "signal", o: CycleOutcome): void {
  t.kills++;
  t[how]++;
  t.inDoubt += o.inDoubtAtKill > 0 ? 1 : 0;
  t.corrupted += o.corrupted.length > 0 ? 1 : 0;
  t.lost += o.lost.length;
  t.blind += o.blind.length;
  t.notResumable += o.notResumable.length;
  t.resumed += o.resumed;
  t.equal += o.equal;
}

export const cellName = (c: Cell) =>
  `${c.store} · ${c.builder === "agent" ? "built-in agent" : "external builder"} · ${c.mode}`;

/** True when every must-be-zero column is zero and every resumed envelope matched. */
export const clean = (t: Tally) =>
  t.corrupted === 0 && t.lost === 0 && t.blind === 0 && t.notResumable === 0 && t.equal === t.resumed;

export function table(rows: readonly [string, Tally][]): string {
  const total = emptyTally();
  for (const [, t] of rows) for (const k of Object.keys(total) as (keyof Tally)[]) total[k] += t[k];
  const head = [
    "cell",
    "kills (fault/signal)",
    "left a call in doubt",
    "corrupted logs",
    "lost acknowledged events",
    "blind re-runs of in-doubt calls",
    "runs not resumable",
    "resumed envelope = uninterrupted",
  ];
  const line = (name: string, t: Tally) => [
    name,
    `${t.kills} (${t.fault}/${t.signal})`,
    String(t.inDoubt),
    String(t.corrupted),
    String(t.lost),
    String(t.blind),
    String(t.notResumable),
    `${t.equal}/${t.resumed}`,
  ];
  const body = [...rows.map(([n, t]) => line(n, t)), line("**total**", total)];
  // Columns padded to one width, as the repository's Markdown formatter lays tables out.
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)));
  const md = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [md(head), md(widths.map((w) => "-".repeat(w))), ...body.map(md)].join("\n");
}
