/**
 * The rules inside each layer (docs/architecture.md, "Rooms inside the layers"), as pure functions over an
 * import graph, beside the layer rules of import-rules.ts.
 *
 * A layer's folder (src/core/, src/runner/, …) is split into rooms: its sub-folders, each a concept, and
 * its own root files. ROOMS lists a folder's rooms lowest first; a file may import files of its own room
 * and of rooms lower in the list, never higher. So no two rooms import each other, a parent folder and
 * its sub-folder included. A layer with no entry is one room.
 *
 * Beside the order:
 * - run code (a file under a `run/` room) never imports goal code (a file under a `goal/` room), in any layer;
 * - no `export *`: every import names the module that defines what it takes;
 * - every test folder mirrors a source folder: test/<path>/ is src/<path>/ (test/scripts/ is scripts/;
 *   test/e2e/ and test/support/ are the suite's own).
 */
import type { ImportGraph } from "./import-rules.js";

/** The root files of a layer's folder, as a room name. */
export const ROOT = ".";

/** Each layer's rooms, lowest first. Every folder that holds files must be listed. */
export const ROOMS: Readonly<Record<string, readonly string[]>> = {
  core: [
    "kernel",
    "task",
    "self-check",
    "events/goal",
    "events",
    "observation",
    "run",
    "agent",
    "goal/turn",
    "goal",
    "goal/schedule",
  ],
  store: ["kernel", "sqlite", "postgres", ROOT],
  agent: ["models", "models/model-server", "tools", "self-check", "todo", ROOT],
  builders: [ROOT, "stop-gate", "claude", "codex"],
  gates: ["tamper/twins", "tamper", ROOT],
  runner: [
    "task-source",
    "task-source/mission",
    "stream",
    "run/context",
    "run/phases",
    "run",
    "goal/repo",
    "goal",
    "goal/turn",
    "goal/schedule",
    "goal/notify",
    "host",
    "init",
    "from-commit",
  ],
  cli: ["output", "flags", "report", "commands", "commands/task", "commands/hook", "commands/goal", ROOT],
};

export interface RoomViolation {
  kind: "room_order" | "unknown_room" | "run_imports_goal" | "export_star" | "test_not_mirrored";
  message: string;
}

/** `src/core/goal/turn/x.ts` → { layer: "core", room: "goal/turn" }; root files are in room ".". */
export function roomOf(file: string): { layer: string; room: string } | null {
  const m = /^src\/([^/]+)\/(.+)$/.exec(file);
  if (!m) return null;
  const rest = m[2] as string;
  const slash = rest.lastIndexOf("/");
  return { layer: m[1] as string, room: slash < 0 ? ROOT : rest.slice(0, slash) };
}

const isRunCode = (file: string) => /^src\/[^/]+\/(.+\/)?run\//.test(file);
const isGoalCode = (file: string) => /^src\/[^/]+\/(.+\/)?goal\//.test(file);

/** The room rule for one edge, under `rooms` (ROOMS by default): null when it is allowed. */
export function roomViolation(
  from: string,
  to: string,
  rooms: Readonly<Record<string, readonly string[]>> = ROOMS,
): RoomViolation | null {
  if (isRunCode(from) && isGoalCode(to))
    return { kind: "run_imports_goal", message: `${from} → ${to}: run code imports goal code` };
  const a = roomOf(from);
  const b = roomOf(to);
  if (a === null || b === null || a.layer !== b.layer || a.room === b.room) return null;
  const order = rooms[a.layer];
  if (order === undefined) return null;
  const ia = order.indexOf(a.room);
  const ib = order.indexOf(b.room);
  if (ia < 0 || ib < 0) {
    const unknown = ia < 0 ? a.room : b.room;
    return {
      kind: "unknown_room",
      message: `${from} → ${to}: src/${a.layer}/${unknown}/ is not a room of src/${a.layer}/; add it to ROOMS in scripts/room-rules.ts`,
    };
  }
  if (ib > ia)
    return {
      kind: "room_order",
      message: `${from} → ${to}: room ${a.room} of ${a.layer}/ imports room ${b.room}, which sits above it`,
    };
  return null;
}

/** Every room-rule violation of a graph; `exportStar` lists the files that hold an `export *`. */
export function checkRooms(
  graph: ImportGraph,
  exportStar: readonly string[],
  rooms: Readonly<Record<string, readonly string[]>> = ROOMS,
): RoomViolation[] {
  const out: RoomViolation[] = [];
  for (const file of graph.keys()) {
    const r = roomOf(file);
    const order = r ? rooms[r.layer] : undefined;
    if (r && order && !order.includes(r.room))
      out.push({
        kind: "unknown_room",
        message: `${file}: src/${r.layer}/${r.room === ROOT ? "" : `${r.room}/`} is not a room of src/${r.layer}/; add it to ROOMS in scripts/room-rules.ts`,
      });
  }
  for (const [from, tos] of graph)
    for (const to of tos) {
      const v = roomViolation(from, to, rooms);
      if (v && v.kind !== "unknown_room") out.push(v);
    }
  for (const file of exportStar)
    out.push({ kind: "export_star", message: `${file}: \`export *\`; export the names one by one` });
  return out;
}

/** Test folders the suite keeps for itself, and the ones that mirror a folder other than src/. */
const TEST_OWN = ["test/e2e", "test/support"];
const TEST_ELSEWHERE: Readonly<Record<string, string>> = { "test/scripts": "scripts", "test/bench": "bench" };

/**
 * The folders of test files that mirror no source folder. `testDirs` are the folders (relative to the
 * repository) that hold test files; `exists` says whether a folder is there.
 */
export function unmirroredTests(
  testDirs: readonly string[],
  exists: (dir: string) => boolean,
): RoomViolation[] {
  const out: RoomViolation[] = [];
  for (const dir of testDirs) {
    if (TEST_OWN.some((own) => dir === own || dir.startsWith(`${own}/`))) continue;
    const elsewhere = Object.entries(TEST_ELSEWHERE).find(([t]) => dir === t || dir.startsWith(`${t}/`));
    const mirror = elsewhere
      ? `${elsewhere[1]}${dir.slice(elsewhere[0].length)}`
      : dir === "test"
        ? "src"
        : `src${dir.slice("test".length)}`;
    if (!exists(mirror))
      out.push({
        kind: "test_not_mirrored",
        message: `${dir}/: mirrors no source folder (${mirror}/ does not exist); put its tests beside the code they test`,
      });
  }
  return out;
}
