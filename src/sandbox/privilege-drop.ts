import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
} from "node:fs";
import { join } from "node:path";
import { InfrastructureError } from "../core/kernel/errors.js";
import { systemTool } from "./environment.js";
import { ownedAndClosed } from "./owned-folder.js";
import { parentCheck } from "./parent-death.js";
import type { SandboxUser } from "./sandbox-user.js";

/** A host path the sandbox mounts, reached through the stage (see stagedBubblewrap). */
export interface StagedSource {
  source: string;
  writable: boolean;
}

/**
 * The argv that runs bubblewrap as `user` while still mounting folders only root may enter.
 *
 * Unprivileged bwrap resolves every mount source with its caller's rights, so a workspace under a 0700
 * run folder or under /root cannot be mounted by the sandbox user, not even by descriptor (bwrap 0.8
 * resolves `--bind-fd`'s /proc/self/fd path by name too). So `unshare`, still root, opens a private mount
 * namespace in which a small script (STAGE_SCRIPT) bind-mounts each source into the stage folder; setpriv
 * then drops to the sandbox user (real, effective and saved ids, no supplementary groups, no capabilities,
 * no_new_privs) and execs the real sandbox, whose sources are the staged paths. Every step execs the next,
 * so bwrap stays loopgate's own child, in its process group, and dies with it (a capability-less root
 * parent in between could not deliver bwrap's parent-death signal to another uid). The namespace dies
 * with its last process: nothing is mounted on the host.
 *
 * Where every source is a folder bound as it is (the common case), each is bound onto a numbered mount
 * point made once in the stage folder (root's, 0711: the sandbox user may pass through, not list; on the
 * host its folders stay empty). Otherwise (a file, or a closed folder shown entry by entry) the script
 * first mounts a fresh tmpfs (0755) over the stage and makes what it binds onto. The first way saves a
 * `mount` and a `mkdir` per source: about a fifth of what a sandbox costs to start.
 *
 * `inner(stage)` builds the sandbox's bwrap argv with the given source mapper.
 */
export function stagedBubblewrap(
  user: SandboxUser,
  env: Readonly<Record<string, string>>,
  inner: (stage: (s: StagedSource) => string) => string[],
): string[] {
  const taken = STAGE_VARIABLES.filter((name) => Object.hasOwn(env, name));
  if (taken.length)
    throw new InfrastructureError(
      `the sandbox's environment holds ${taken.join(", ")}, a name loopgate's privilege drop uses for itself: rename it`,
    );
  const dir = stageDir();
  const staged: StagedSource[] = [];
  const innerArgv = inner((s) => {
    staged.push(s);
    return `${dir}/${staged.length - 1}`;
  });
  const ops: string[] = [];
  let fresh = false;
  staged.forEach((s, i) => {
    const children = s.writable ? null : closedFolderChildren(s.source, user);
    if (!children) {
      ops.push("bind", s.source, String(i));
      if (!isFolder(s.source)) fresh = true;
    } else {
      fresh = true;
      ops.push("dir", String(i));
      for (const c of children)
        ops.push(
          ...(c.link === null
            ? ["bind", `${s.source}/${c.name}`, `${i}/${c.name}`]
            : ["link", c.link, `${i}/${c.name}`]),
        );
    }
  });
  const tool = (name: string) => {
    const found = systemTool(name);
    if (!found)
      throw new InfrastructureError(
        `${name} (util-linux/coreutils) is not installed, so loopgate, running as root, cannot run sandboxed code as an unprivileged user; install it`,
      );
    return found;
  };
  const stage = [
    tool("unshare"),
    "--mount",
    "--propagation",
    "private",
    "--",
    tool("sh"),
    "-c",
    STAGE_SCRIPT,
    "stage",
  ];
  const tools = [tool("mount"), tool("mkdir"), tool("ln")];
  // The sandbox's PID 1 must hold exactly the spec's environment: the stage shell sets PWD, so it puts PWD
  // back as the spec has it (unset, or its value) before it execs the rest.
  const pwd = env.PWD === undefined ? ["unset", ""] : ["set", env.PWD];
  if (!fresh && !mountPointsReady(dir, staged.length)) fresh = true;
  return [
    ...stage,
    ...tools,
    dir,
    fresh ? "fresh" : "made",
    String(process.pid),
    ...pwd,
    ...ops,
    "--",
    ...dropArgv(user),
    ...innerArgv,
  ];
}

/**
 * Run as root in the new mount namespace: `$1 $2 $3` are mount, mkdir and ln by absolute path (the
 * spec's PATH is never searched as root), `$4` the stage folder, `$5` `fresh` (mount a tmpfs over the
 * stage and make each mount point) or `made` (bind onto the stage's own numbered folders), `$6` loopgate's
 * pid (the script exits at once when its parent is another: parent-death.ts), `$7 $8` what PWD must be
 * in the environment the command gets (`unset` and an empty word, or `set` and its value),
 * then operations up to `--` (`bind SRC REL`, `dir REL`, `link TARGET REL`, REL inside the stage), then
 * the command to exec.
 * Every expansion is quoted; nothing here is a shell string built from a path. Its own variables
 * (STAGE_VARIABLES) are never exported; a spec's environment may not hold one (stagedBubblewrap refuses
 * it), so the command gets that environment exactly, PWD as the spec has it.
 */
const STAGE_VARIABLES = [
  "lg_mount",
  "lg_mkdir",
  "lg_ln",
  "lg_stage",
  "lg_fresh",
  "lg_parent",
  "lg_pwd_is",
  "lg_pwd",
];

const STAGE_SCRIPT = `set -eu
umask 022
lg_mount=$1 lg_mkdir=$2 lg_ln=$3 lg_stage=$4 lg_fresh=$5 lg_parent=$6 lg_pwd_is=$7 lg_pwd=$8
shift 8
${parentCheck("lg_parent")}
if [ "$lg_fresh" = fresh ]; then "$lg_mount" -t tmpfs -o mode=0755 loopgate-stage "$lg_stage"; fi
while [ "$1" != "--" ]; do
  case "$1" in
    bind)
      if [ "$lg_fresh" != fresh ]; then :
      elif [ -d "$2" ]; then "$lg_mkdir" -- "$lg_stage/$3"; else : > "$lg_stage/$3"; fi
      "$lg_mount" --rbind -- "$2" "$lg_stage/$3"
      shift 3 ;;
    dir) "$lg_mkdir" -- "$lg_stage/$2"; shift 2 ;;
    link) "$lg_ln" -s -- "$2" "$lg_stage/$3"; shift 3 ;;
    *) echo "loopgate stage: unknown operation $1" >&2; exit 125 ;;
  esac
done
shift
if [ "$lg_pwd_is" = set ]; then PWD=$lg_pwd; export PWD; else unset PWD; fi
exec "$@"`;

/** setpriv's prefix that becomes `user` for good before exec'ing the rest. */
export function dropArgv(user: SandboxUser): string[] {
  const setpriv = systemTool("setpriv");
  if (!setpriv)
    throw new InfrastructureError(
      "setpriv (util-linux) is not installed, so loopgate, running as root, cannot run sandboxed code as an unprivileged user; install util-linux",
    );
  return [
    setpriv,
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--no-new-privs",
    "--pdeathsig=SIGKILL",
    "--",
  ];
}

/**
 * A read-only folder the sandbox user may not list or enter (a 0700 task folder, a folder made by
 * mkdtemp): its entries, to be shown one by one in an open folder of the stage, so the sandbox reads
 * what others may read inside it without loopgate changing the host folder's mode. Null when the folder
 * is open to others already, is not a folder, or holds a name that cannot pass through argv (not UTF-8);
 * then the folder is mounted as it is.
 */
function closedFolderChildren(
  path: string,
  user: SandboxUser,
): { name: string; link: string | null }[] | null {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st?.isDirectory() || st.uid === user.uid || (st.mode & 0o005) === 0o005) return null;
  const out: { name: string; link: string | null }[] = [];
  for (const raw of readdirSync(path, { encoding: "buffer" })) {
    const name = raw.toString("utf8");
    if (!Buffer.from(name).equals(raw)) return null;
    const p = `${path}/${name}`;
    const entry = lstatSync(p, { throwIfNoEntry: false });
    if (!entry) continue; // removed since the listing
    out.push({ name, link: entry.isSymbolicLink() ? readlinkSync(p) : null });
  }
  return out;
}

let stage: string | null = null;

/** The stage folder's fixed place: /run is root's (0755, not writable by others), so no one else can plant it. */
const SHARED_STAGE = "/run/loopgate-stage";

/**
 * The host folder each sandbox's namespace binds its sources in: root's, 0711, holding only empty
 * numbered folders on the host (the binds, and a tmpfs over it when one is needed, exist only inside
 * that namespace). One fixed folder under /run when it is root's and writable by no one else, shared by
 * every loopgate process and never removed; else a fresh folder under /tmp, removed when loopgate exits.
 */
function stageDir(): string {
  if (stage && existsSync(stage)) return stage;
  if (sharedStageUsable()) {
    stage = SHARED_STAGE;
    return stage;
  }
  stage = mkdtempSync(join("/tmp", "loopgate-stage-"));
  chmodSync(stage, 0o711);
  const made = stage;
  process.once("exit", () => {
    try {
      rmSync(made, { recursive: true, force: true });
    } catch {
      // its folders are empty on the host either way
    }
  });
  return stage;
}

/** How many numbered mount points each stage folder is known to hold. */
const mountPoints = new Map<string, number>();

/**
 * Makes sure the stage folder `dir` holds empty folders `0` … `n-1` to bind onto (made once, kept: each
 * namespace binds onto them, the host never does). False if one cannot be made or is not a folder.
 */
function mountPointsReady(dir: string, n: number): boolean {
  const known = mountPoints.get(dir) ?? 0;
  for (let i = known; i < n; i++) {
    const p = `${dir}/${i}`;
    try {
      mkdirSync(p, { mode: 0o755 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") return false;
    }
    if (!lstatSync(p).isDirectory()) return false;
  }
  if (n > known) mountPoints.set(dir, n);
  return true;
}

function isFolder(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

function sharedStageUsable(): boolean {
  const closed = (p: string) => ownedAndClosed(p, 0, 0o022);
  if (!closed("/run")) return false;
  try {
    mkdirSync(SHARED_STAGE, { mode: 0o711 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") return false;
  }
  if (!closed(SHARED_STAGE)) return false;
  // Made 0700 by earlier versions: the sandbox user must pass through it to reach the mount points.
  if ((lstatSync(SHARED_STAGE).mode & 0o777) !== 0o711) chmodSync(SHARED_STAGE, 0o711);
  return true;
}
