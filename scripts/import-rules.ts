/**
 * The import rules of src/ (docs/architecture.md, "The layers of the code"), as pure functions over an import graph, so that
 * scripts/check-imports.ts can apply them to the real tree and a unit test to a synthetic one.
 *
 * Levels, lowest first; a file may import its own folder, any folder of a lower level, and nothing else:
 *
 *   0 core/                        pure domain: imports nothing outside core/
 *   1 store/
 *   2 workspace/  sandbox/         (not each other)
 *   3 gates/  judge/               (not each other)
 *   4 agent/  builders/            (not each other: what they share lives lower, in core/)
 *   5 runner/                      runs, and its task sources (runner/mission-source/)
 *   6 selftest/  experiments/  mcp/   drive whole runs (mcp: the MCP server), so they sit above runner/ (not each other)
 *     serve/                       the board (`loopgate serve`): reads the log and writes through runner/'s goal
 *                                  write path; what it shows of the CLI's own readers, cli/ hands it down
 *   7 cli/  web/                   user surfaces
 *
 * Folders on one level do not import each other: two folders that need each other are one concept, or
 * share something that belongs lower. No import cycle anywhere, type-only imports included.
 *
 * The store's door: cli/ imports store/ only through STORE_DOORS, so that the SQLite and PostgreSQL rooms
 * (store/sqlite/, store/postgres/) are loaded when a store of their kind is opened, never by a command
 * that has no use for them (see store/open-store.ts).
 */

export const LEVELS: Readonly<Record<string, number>> = {
  core: 0,
  store: 1,
  workspace: 2,
  sandbox: 2,
  gates: 3,
  judge: 3,
  agent: 4,
  builders: 4,
  runner: 5,
  selftest: 6,
  experiments: 6,
  mcp: 6,
  serve: 6,
  cli: 7,
  web: 7,
};

/** Files (relative to the repository, `src/<folder>/...`) → the files they import. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** One import edge the rules refuse today but that is known and owned (see scripts/import-allowlist.ts). */
export interface AllowedImport {
  from: string;
  to: string;
  /** Who removes it, and why it is still there. */
  owner: string;
}

export interface Violation {
  kind: "cycle" | "upward" | "sideways" | "unknown_folder" | "stale_allowance" | "store_door";
  message: string;
}

/** The top folder of a file under src/ (`src/core/events/run-events.ts` → `core`), or null outside src/. */
export function folderOf(file: string): string | null {
  const m = /^src\/([^/]+)\//.exec(file);
  return m ? (m[1] as string) : null;
}

/** The layer rule for one edge: null when it is allowed. */
export function layerViolation(from: string, to: string): Violation | null {
  const a = folderOf(from);
  const b = folderOf(to);
  if (a === null || b === null || a === b) return null;
  const la = LEVELS[a];
  const lb = LEVELS[b];
  if (la === undefined || lb === undefined) {
    const unknown = la === undefined ? a : b;
    return {
      kind: "unknown_folder",
      message: `${from} → ${to}: src/${unknown}/ has no level; add it to LEVELS in scripts/import-rules.ts`,
    };
  }
  if (lb > la)
    return {
      kind: "upward",
      message: `${from} → ${to}: ${a}/ (level ${la}) imports ${b}/ (level ${lb}), up the layer list`,
    };
  if (lb === la)
    return {
      kind: "sideways",
      message: `${from} → ${to}: ${a}/ and ${b}/ are on one level (${la}) and must not import each other`,
    };
  return null;
}

/**
 * The files of store/ that cli/ may import: the door (store/open-store.ts: where a store is, opening it,
 * the rooms loaded on demand, and the types and small values the commands use) and the EventStore
 * interface (store/kernel/event-store.ts holds types only, so importing it loads no store).
 */
export const STORE_DOORS: readonly string[] = ["src/store/open-store.ts", "src/store/kernel/event-store.ts"];

/** The store-door rule for one edge: null when it is allowed. */
export function storeDoorViolation(from: string, to: string): Violation | null {
  if (folderOf(from) !== "cli" || folderOf(to) !== "store" || STORE_DOORS.includes(to)) return null;
  return {
    kind: "store_door",
    message: `${from} → ${to}: cli/ reaches store/ only through ${STORE_DOORS.join(" or ")} (the rooms behind it load on demand)`,
  };
}

/**
 * The import cycles of a graph: each strongly connected component of more than one file (or a file
 * importing itself), as one cycle through it, starting at its first file in sorted order.
 */
export function findCycles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm, iterative so that a deep graph cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  const nodes = [...graph.keys()].sort();
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; edge: number };
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++] as string;
        if (!graph.has(to)) continue;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(to) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent)
        low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = component.length === 1 && (graph.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfLoop) components.push(component.sort());
      }
    }
  }
  return components
    .map((c) => cycleThrough(graph, c))
    .sort((x, y) => (x[0] as string).localeCompare(y[0] as string));
}

/** A shortest cycle from the component's first file back to itself, inside the component (BFS). */
function cycleThrough(graph: ImportGraph, component: readonly string[]): string[] {
  const members = new Set(component);
  const start = component[0] as string;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [node];
        for (let n = node; n !== start; ) {
          n = previous.get(n) as string;
          path.unshift(n);
        }
        return [...path, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [...component, start];
}

/**
 * Every violation of the rules in a graph. Allowed edges are taken out first (so a known cycle through
 * one of them is not reported); an allowed edge the graph no longer has is itself reported, so the
 * allowlist only ever shrinks.
 */
export function checkImports(graph: ImportGraph, allowed: readonly AllowedImport[] = []): Violation[] {
  const key = (from: string, to: string) => `${from}\u0000${to}`;
  const allowedKeys = new Set(allowed.map((a) => key(a.from, a.to)));
  const pruned = new Map<string, string[]>();
  const violations: Violation[] = [];
  for (const [from, tos] of graph) {
    const kept: string[] = [];
    for (const to of tos) {
      if (allowedKeys.has(key(from, to))) continue;
      kept.push(to);
      const v = layerViolation(from, to) ?? storeDoorViolation(from, to);
      if (v) violations.push(v);
    }
    pruned.set(from, kept);
  }
  for (const cycle of findCycles(pruned))
    violations.push({ kind: "cycle", message: `import cycle: ${cycle.join(" → ")}` });
  for (const a of allowed)
    if (!(graph.get(a.from) ?? []).includes(a.to))
      violations.push({
        kind: "stale_allowance",
        message: `${a.from} → ${a.to} no longer exists: remove it from scripts/import-allowlist.ts`,
      });
  return violations;
}
