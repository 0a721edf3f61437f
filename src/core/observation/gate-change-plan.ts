import picomatch from "picomatch";
import { boundText, LIMITS } from "../kernel/bounded.js";
import { derivedArtifact } from "./derived-artifacts.js";
import type { Observation, ObservedEntry } from "./observation.js";
import { comparePaths, diffObservations, symlinkEscapes } from "./observation.js";

/** Why a builder's change did not flow unchanged into the gate environment. */
export type ChangeFindingCode =
  | "protected_path_modified"
  | "protected_path_added"
  | "change_outside_deliverables"
  | "symlink_escapes_workspace"
  | "unsupported_entry"
  | "derived_artifact_not_carried"
  | "privileged_mode_bit";

/** One appraisal of the builder's changes; `detail` says in plain words what happened. */
export interface ChangeFinding {
  code: ChangeFindingCode;
  severity: "blocking" | "warning";
  path: string;
  detail: string;
}

/** What the gate environment takes from the run workspace (`carry`) and which pristine paths it leaves out (`drop`). */
export interface ChangePlan {
  carry: ObservedEntry[];
  drop: string[];
  findings: ChangeFinding[];
}

/** Set-uid, set-gid and sticky bits: what no builder may leave on the host (loopgate clears them). */
const PRIVILEGED_BITS = 0o7000;

/** At most this many findings per code are listed one by one; the rest fold into one summary finding. */
const MAX_FINDINGS_PER_CODE = 10;

type Source = "pristine" | "workspace" | "none";

function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/** A path matches when it or any ancestor matches, so a pattern naming a directory covers its subtree (like gitignore). */
export function subtreeMatcher(patterns: readonly string[]): (path: string) => boolean {
  const cleaned = patterns.map((p) => p.replace(/^(\.\/)+/, "").replace(/\/+$/, "")).filter((p) => p !== "");
  if (cleaned.length === 0) return () => false;
  const isMatch = picomatch(cleaned, { dot: true });
  const memo = new Map<string, boolean>();
  const test = (path: string): boolean => {
    if (path === "") return false;
    let hit = memo.get(path);
    if (hit === undefined) {
      hit = isMatch(path) || test(parentOf(path));
      memo.set(path, hit);
    }
    return hit;
  };
  return test;
}

function describe(before: ObservedEntry | undefined, after: ObservedEntry | undefined): string {
  if (!before) return `was added (${after?.type})`;
  if (!after) return `was removed`;
  if (before.type !== after.type) return `changed from ${before.type} to ${after.type}`;
  return before.mode !== after.mode && before.hash === after.hash
    ? `changed mode from ${before.mode.toString(8)} to ${after.mode.toString(8)}`
    : `was modified`;
}

/**
 * Decides which of the builder's changes reach the gate environment. Protected wins over
 * deliverables; escaping symlinks, FIFOs/sockets/devices and derived artifacts (bytecode, build and
 * lint caches: see derived-artifacts.ts) never travel. The result is
 * always a consistent tree: every kept or carried entry has a directory as its parent.
 */
export function planGateChanges(
  pristine: Observation,
  workspace: Observation,
  rules: { deliverables: readonly string[]; protected: readonly string[] },
): ChangePlan {
  const before = new Map(pristine.entries.map((e) => [e.path, e]));
  const after = new Map(workspace.entries.map((e) => [e.path, e]));
  const isProtected = subtreeMatcher(rules.protected);
  const inDeliverables = rules.deliverables.length === 0 ? () => true : subtreeMatcher(rules.deliverables);
  const diff = diffObservations(pristine, workspace);
  const exists = (p: string) => before.has(p) || after.has(p);
  const source = new Map<string, Source>();
  const raw: ChangeFinding[] = [];
  const note = (
    code: ChangeFinding["code"],
    severity: ChangeFinding["severity"],
    path: string,
    detail: string,
  ) => raw.push({ code, severity, path, detail });

  const changed = [...diff.added, ...diff.modified, ...diff.typeChanged].sort(comparePaths);
  for (const path of changed) {
    const old = before.get(path);
    const now = after.get(path) as ObservedEntry;
    const what = describe(old, now);
    // Whatever else is true of the path: a builder that makes a set-uid binary is trying the host.
    if (now.type !== "symlink" && now.mode & PRIVILEGED_BITS)
      note(
        "privileged_mode_bit",
        "blocking",
        path,
        `${path} was given mode ${now.mode.toString(8)} (${privilegedBits(now.mode)}); loopgate never keeps these bits: they are cleared in the run workspace, its stored copies and the gate environments`,
      );
    if (isProtected(path)) {
      if (old)
        note(
          "protected_path_modified",
          "blocking",
          path,
          `protected ${path} ${what}; the pristine version is restored`,
        );
      else
        note(
          "protected_path_added",
          "warning",
          path,
          `${path} ${what} under a protected pattern; it is not carried`,
        );
      source.set(path, old ? "pristine" : "none");
    } else if (derivedArtifact(path, exists)) {
      note("derived_artifact_not_carried", "warning", path, derivedDetail(path, what, exists));
      source.set(path, old ? "pristine" : "none");
    } else if (!inDeliverables(path)) {
      note(
        "change_outside_deliverables",
        "warning",
        path,
        `${path} ${what} outside the deliverables; it is not carried`,
      );
      source.set(path, old ? "pristine" : "none");
    } else if (now.type === "symlink" && symlinkEscapes(path, now.target ?? "")) {
      const detail = `symlink ${path} points to ${JSON.stringify(now.target)}, outside the workspace; it is not carried and the gates do not see ${path}`;
      note("symlink_escapes_workspace", "blocking", path, detail);
      source.set(path, "none");
    } else if (now.type === "other") {
      const detail = `${path} is a FIFO, socket or device, cannot be read, or its path is too long to carry; it is not carried`;
      note("unsupported_entry", "blocking", path, detail);
      source.set(path, old ? "pristine" : "none");
    } else {
      source.set(path, "workspace");
    }
  }
  for (const path of diff.removed) {
    if (isProtected(path)) {
      note(
        "protected_path_modified",
        "blocking",
        path,
        `protected ${path} was removed; the pristine version is restored`,
      );
      source.set(path, "pristine");
    } else if (derivedArtifact(path, exists)) {
      note("derived_artifact_not_carried", "warning", path, derivedDetail(path, "was removed", exists));
      source.set(path, "pristine");
    } else if (!inDeliverables(path)) {
      note(
        "change_outside_deliverables",
        "warning",
        path,
        `${path} was removed outside the deliverables; it is restored`,
      );
      source.set(path, "pristine");
    } else {
      source.set(path, "none");
    }
  }

  const result = (path: string): ObservedEntry | undefined => {
    const s = source.get(path);
    if (s === undefined || s === "pristine") return before.get(path);
    return s === "workspace" ? after.get(path) : undefined;
  };

  // A restored pristine entry needs its pristine ancestors, even where the builder replaced or removed them.
  for (const [path, s] of [...source]) {
    if (s !== "pristine") continue;
    for (let a = parentOf(path); a !== ""; a = parentOf(a)) {
      if (result(a)?.type !== "dir") source.set(a, "pristine");
    }
  }

  // A carried entry needs a directory parent; a new directory that only holds deliverables is carried implicitly.
  const ensureDir = (dir: string): boolean => {
    if (dir === "") return true;
    const r = result(dir);
    if (r) return r.type === "dir";
    const w = after.get(dir);
    if (w?.type !== "dir" || isProtected(dir) || !ensureDir(parentOf(dir))) return false;
    source.set(dir, "workspace");
    return true;
  };
  for (const path of changed) {
    if (source.get(path) !== "workspace" || ensureDir(parentOf(path))) continue;
    source.set(path, "none");
    note(
      "change_outside_deliverables",
      "warning",
      path,
      `${path} is not carried: its parent directory is not carried`,
    );
  }

  // A directory carried implicitly after all is no longer "not carried".
  const findings = raw.filter(
    (f) => !(f.code === "change_outside_deliverables" && source.get(f.path) === "workspace"),
  );
  const carry: ObservedEntry[] = [];
  const drop: string[] = [];
  for (const [path, s] of source) {
    const w = after.get(path);
    if (s === "workspace" && w) carry.push(w);
    else if (s === "none" && before.has(path)) drop.push(path);
  }
  carry.sort((a, b) => comparePaths(a.path, b.path));
  drop.sort(comparePaths);
  return { carry, drop, findings: boundFindings(findings) };
}

function privilegedBits(mode: number): string {
  const bits = [
    [0o4000, "set-uid"],
    [0o2000, "set-gid"],
    [0o1000, "sticky"],
  ] as const;
  return bits
    .filter(([b]) => mode & b)
    .map(([, name]) => name)
    .join(", ");
}

function derivedDetail(path: string, what: string, exists: (p: string) => boolean): string {
  const d = derivedArtifact(path, exists);
  return `${path} ${what}: ${d?.what} (${d?.runtime}); the builder's derived files never reach the gates (the pristine state is kept), which rebuild what they need from the delivered sources`;
}

/** Folds findings under an ancestor with the same code, then caps each code with one summary finding. */
function boundFindings(raw: readonly ChangeFinding[]): ChangeFinding[] {
  const pathsByCode = new Map<string, Set<string>>();
  for (const f of raw) {
    const set = pathsByCode.get(f.code) ?? new Set<string>();
    set.add(f.path);
    pathsByCode.set(f.code, set);
  }
  const folded = new Map<ChangeFinding, number>();
  const keeperOf = new Map<string, ChangeFinding>();
  const kept: ChangeFinding[] = [];
  for (const f of [...raw].sort((a, b) => comparePaths(a.path, b.path))) {
    const set = pathsByCode.get(f.code) as Set<string>;
    let top: string | undefined;
    for (let a = parentOf(f.path); a !== ""; a = parentOf(a)) if (set.has(a)) top = a;
    const keeper = top === undefined ? undefined : keeperOf.get(`${f.code}\0${top}`);
    if (keeper) {
      folded.set(keeper, (folded.get(keeper) ?? 0) + 1);
      continue;
    }
    keeperOf.set(`${f.code}\0${f.path}`, f);
    kept.push(f);
  }
  // Per code, list the findings that cover the most paths; fold the rest into one summary.
  const byCode = new Map<ChangeFinding["code"], { f: ChangeFinding; n: number }[]>();
  for (const f of kept) {
    const list = byCode.get(f.code) ?? [];
    list.push({ f, n: folded.get(f) ?? 0 });
    byCode.set(f.code, list);
  }
  const out: ChangeFinding[] = [];
  for (const [code, list] of byCode) {
    list.sort((a, b) => b.n - a.n || comparePaths(a.f.path, b.f.path));
    for (const { f, n } of list.slice(0, MAX_FINDINGS_PER_CODE)) {
      out.push(n > 0 ? { ...f, detail: `${f.detail} (and ${n} more changed paths below it)` } : f);
    }
    const rest = list.slice(MAX_FINDINGS_PER_CODE);
    if (rest.length === 0) continue;
    const dir = rest.map(({ f }) => parentOf(f.path)).reduce(commonDir) || ".";
    const paths = rest.reduce((sum, { n }) => sum + 1 + n, 0);
    const severity = rest.some(({ f }) => f.severity === "blocking") ? "blocking" : "warning";
    const detail = `${paths} more paths under ${dir} have this finding and are not listed one by one`;
    out.push({ code, severity, path: dir, detail });
  }
  // A path or a symlink target from the builder can be thousands of characters: the detail is cut, said.
  return out
    .map((f) => ({ ...f, detail: boundText(f.detail, LIMITS.detail) }))
    .sort(
      (a, b) =>
        (a.severity === b.severity ? 0 : a.severity === "blocking" ? -1 : 1) ||
        comparePaths(a.path, b.path) ||
        comparePaths(a.code, b.code),
    );
}

/** The deepest directory that contains both directories ("" is the root). */
function commonDir(a: string, b: string): string {
  const x = a.split("/");
  const y = b.split("/");
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return x.slice(0, i).join("/");
}
