import { dirname, isAbsolute, relative } from "node:path";
import type { ContractWire } from "../../../core/goal/contract-wire.js";
import type { GoalView } from "../../../runner/goal/goal-view.js";

// The paths goal commands print with --json: relative to the goal file's folder, so the output is the same
// on every machine and carries no local layout; absolute only when asked (--absolute).

/** How a path is printed: relative to `base` (the goal file's folder), or as it is. */
export type PathStyle = (path: string) => string;

/** The style of the paths of a goal created from `goalFile` (null: a goal that recorded none keeps them). */
export function pathStyle(goalFile: string | null, absolute: boolean): PathStyle {
  if (absolute || goalFile === null) return (p) => p;
  const base = dirname(goalFile);
  return (p) => (isAbsolute(p) ? relative(base, p) || "." : p);
}

/** A reference `PATH#ANCHOR` (an acceptance item) with its path printed in `style`. */
const refStyle = (style: PathStyle, ref: string) => {
  const i = ref.lastIndexOf("#");
  return i < 0 ? style(ref) : `${style(ref.slice(0, i))}${ref.slice(i)}`;
};

/** The interaction contract as --json prints it. */
export function contractJson(c: ContractWire, style: PathStyle): ContractWire {
  const g = c.workspace_guard;
  return {
    ...c,
    workspace_guard: { ...g, workspace: g.workspace === null ? null : style(g.workspace) },
  };
}

/** `goal status --json`: the view with its paths printed in `style`. */
export function statusJson(v: GoalView, style: PathStyle): GoalView {
  return {
    ...v,
    workspacePath: v.workspacePath ? style(v.workspacePath) : v.workspacePath,
    sourcePath: v.sourcePath === null ? null : style(v.sourcePath),
    todos: v.todos.map((t) => (t.task ? { ...t, task: { ...t.task, path: style(t.task.path) } } : t)),
    contract: contractJson(v.contract, style),
    acceptance: v.acceptance.map((a) => ({ ...a, ref: refStyle(style, a.ref) })),
  };
}
