// The git reads `task from-commit` needs, each through real git with argv (no shell). Read-only:
// nothing here touches the repository's index, work tree or refs.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { InputError } from "../../core/kernel/errors.js";
import type { ChangedPath } from "./classify.js";

const MAX_OUTPUT = 256 * 1024 * 1024;

/** One commit as `from-commit` sees it. */
export interface CommitInfo {
  sha: string;
  shortSha: string;
  parents: string[];
  subject: string;
  /** The whole message (subject, blank line, body), trailing blank lines cut. */
  message: string;
}

/** A repository to read from: its folder, checked to be inside a git work tree or a bare repository. */
export class GitRepo {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
    const r = spawnSync("git", ["-C", dir, "rev-parse", "--git-dir"], { encoding: "utf8" });
    if (r.error)
      throw new InputError(`cannot run git (${r.error.message}); install git`, "loopgate task from-commit");
    if (r.status !== 0) throw new InputError(`${dir} is not a git repository`, "--repo");
  }

  /** Runs git and returns stdout; a failure throws with git's own message. */
  git(args: readonly string[], what: string): string {
    const r = spawnSync("git", ["-C", this.dir, ...args], { encoding: "utf8", maxBuffer: MAX_OUTPUT });
    if (r.error) throw new InputError(`git ${args[0]} failed: ${r.error.message}`, what);
    if (r.status !== 0)
      throw new InputError(`git ${args.join(" ")} failed: ${r.stderr.trim().slice(0, 500)}`, what);
    return r.stdout;
  }

  /** The full sha of a revision that names a commit, or a clear error naming the revision. */
  resolveCommit(rev: string): string {
    const r = spawnSync("git", ["-C", this.dir, "rev-parse", "--verify", "--quiet", `${rev}^{commit}`], {
      encoding: "utf8",
    });
    if (r.status !== 0 || !r.stdout.trim())
      throw new InputError(
        `unknown revision ${JSON.stringify(rev)} in ${this.dir}`,
        "loopgate task from-commit",
      );
    return r.stdout.trim();
  }

  /** The commits of `A..B`, oldest first (`git rev-list --reverse`). */
  range(from: string, to: string): string[] {
    const a = this.resolveCommit(from);
    const b = this.resolveCommit(to);
    return this.git(["rev-list", "--reverse", `${a}..${b}`], "loopgate task from-commit")
      .split("\n")
      .filter(Boolean);
  }

  /** A commit's sha, parents, subject and message. */
  commit(sha: string): CommitInfo {
    const out = this.git(["show", "-s", "--format=%H%x00%h%x00%P%x00%B", sha], sha);
    const [full = sha, short = sha.slice(0, 7), parents = "", message = ""] = out.split("\0");
    const text = message.replace(/\s+$/, "");
    return {
      sha: full,
      shortSha: short,
      parents: parents.split(" ").filter(Boolean),
      subject: text.split("\n")[0] ?? "",
      message: text,
    };
  }

  /** The paths a commit changes against its parent, renames split into a deletion and an addition. */
  changes(parent: string, sha: string): ChangedPath[] {
    const out = this.git(["diff", "--name-status", "-z", "--no-renames", parent, sha], sha);
    const words = out.split("\0");
    const changes: ChangedPath[] = [];
    for (let i = 0; i + 1 < words.length; i += 2) {
      const status = (words[i] as string).charAt(0);
      const path = words[i + 1] as string;
      if (status === "A" || status === "M" || status === "D" || status === "T")
        changes.push({ status, path });
    }
    return changes;
  }

  /** Every file of a commit's tree. */
  files(sha: string): string[] {
    return this.git(["ls-tree", "-r", "-z", "--name-only", sha], sha).split("\0").filter(Boolean);
  }

  /** One file's bytes at a commit, or null when it has none there. */
  read(sha: string, path: string): Buffer | null {
    const r = spawnSync("git", ["-C", this.dir, "show", `${sha}:${path}`], { maxBuffer: MAX_OUTPUT });
    return r.status === 0 ? r.stdout : null;
  }

  /** The binary-safe diff of `paths` between two commits: what `git apply` replays. */
  diff(parent: string, sha: string, paths: readonly string[]): string {
    return this.git(
      [
        "diff",
        "--binary",
        "--full-index",
        "--no-renames",
        "--no-color",
        parent,
        sha,
        "--",
        ...paths.map(literal),
      ],
      sha,
    );
  }

  /** Writes a commit's tree into `dest` (files only, no .git): `git archive | tar -x`. */
  async exportTree(sha: string, dest: string): Promise<void> {
    mkdirSync(dest, { recursive: true });
    await new Promise<void>((resolve, reject) => {
      const archive = spawn("git", ["-C", this.dir, "archive", "--format=tar", sha], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      const tar = spawn("tar", ["-x", "-f", "-", "-C", dest], { stdio: ["pipe", "ignore", "pipe"] });
      let errors = "";
      archive.stderr.on("data", (d: Buffer) => {
        errors += d.toString();
      });
      tar.stderr.on("data", (d: Buffer) => {
        errors += d.toString();
      });
      archive.stdout.pipe(tar.stdin);
      let pending = 2;
      let failed = false;
      const done = (who: string) => (code: number | null) => {
        if (code !== 0 && !failed) {
          failed = true;
          reject(new InputError(`${who} exited ${code}: ${errors.trim().slice(0, 500)}`, `export of ${sha}`));
        }
        if (--pending === 0 && !failed) resolve();
      };
      archive.on("error", reject);
      tar.on("error", reject);
      archive.on("close", done("git archive"));
      tar.on("close", done("tar"));
    });
  }
}

/** A pathspec that means exactly this path (no glob magic in file names). */
const literal = (p: string) => `:(literal)${p}`;
