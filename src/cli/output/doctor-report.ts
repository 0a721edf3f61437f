// What `loopgate doctor` checks and how it concludes, as pure functions of facts probed elsewhere
// (src/cli/commands/doctor.ts), so the verdict and every remedy line can be tested without a machine.

/** How much loopgate needs a check: without a required one nothing runs; an optional one limits what does. */
export type Need = "required" | "optional";

/** One check's outcome. `skipped`: not configured, so nothing to check (it counts for nothing). */
export interface DoctorCheck {
  id: string;
  need: Need;
  state: "ok" | "missing" | "skipped";
  detail: string;
  /** What to do about it; present whenever the state is `missing`. */
  remedy: string | null;
}

/** The doctor's report: every check and the exit code. */
export interface DoctorReport {
  checks: DoctorCheck[];
  /** 0 all good, 1 something optional missing, 2 something required missing. */
  exit: 0 | 1 | 2;
  verdict: "ok" | "optional_missing" | "required_missing";
}

/** What the prober found; each field is a plain fact. */
export interface DoctorFacts {
  nodeVersion: string;
  /** The path of each program found on PATH, null when absent. */
  programs: {
    bwrap: string | null;
    git: string | null;
    claude: string | null;
    codex: string | null;
  };
  /**
   * Programs as gates find them: on the sandbox's fixed PATH and inside what the gate sandbox mounts
   * (/usr, /bin, …); a Node under ~/.nvm is on the user's PATH but not here. Null when gates cannot start it.
   */
  gatePrograms: { node: string | null; python3: string | null };
  /** The sandbox self-test: null when it passed, else its message; undefined when it could not run (no bwrap). */
  sandboxSelfTest: string | null | undefined;
  store: {
    dir: string;
    writable: boolean;
    detail: string;
    /**
     * The folder's SQLite log, opened read-only as `runs` opens it and checked by SQLite itself
     * (`quick_check`): `problems` empty when sound. Null: no events.db yet; absent: not probed.
     */
    log?: { path: string; problems: string[] } | null;
  };
  /**
   * A Postgres store (`--store postgres://…`), probed read-only instead of the folder: whether it answered
   * (`error`: why not, naming the URL with its password masked), the schema version it holds (0: no
   * loopgate tables yet) against the one this loopgate writes, and the log's integrity problems (null:
   * not checked, e.g. an older schema the next write migrates).
   */
  postgres?: {
    label: string;
    error: string | null;
    version: number | null;
    expected: number;
    problems: string[] | null;
  };
  /**
   * What runs as whom: `detail` says it (loopgate root and the sandbox user, or the caller for both);
   * `error` when the configured sandbox user is unusable (LOOPGATE_SANDBOX_UID/GID). Absent: not probed.
   */
  privileges?: { detail: string; error: string | null };
  /**
   * The sandbox's seccomp filter (src/sandbox/seccomp.ts): whether loopgate has a syscall table for this
   * machine's architecture, and what the filter denies or why there is none. Absent: not probed.
   */
  seccomp?: { available: boolean; detail: string };
  /** How runs make their workspace (copy or overlay) and why; `error` when LOOPGATE_WORKSPACE cannot be honoured. Absent: not probed. */
  workspace?: { mode: string; why: string; error: string | null };
  /** Provider settings from the environment, by variable name (values are never reported). */
  env: Readonly<Record<string, string | undefined>>;
}

const BWRAP_INSTALL =
  "install bubblewrap: sudo apt-get install -y bubblewrap (Debian/Ubuntu), sudo dnf install bubblewrap " +
  "(Fedora), sudo pacman -S bubblewrap (Arch); loopgate's sandbox needs Linux (on macOS or Windows, run it " +
  "in a Linux VM or container); --unsafe-no-sandbox runs builders unconfined";

const ok = (id: string, need: Need, detail: string): DoctorCheck => ({
  id,
  need,
  state: "ok",
  detail,
  remedy: null,
});
const missing = (id: string, need: Need, detail: string, remedy: string): DoctorCheck => ({
  id,
  need,
  state: "missing",
  detail,
  remedy,
});
const skipped = (id: string, detail: string): DoctorCheck => ({
  id,
  need: "optional",
  state: "skipped",
  detail,
  remedy: null,
});

/** The checks, in the order a new user needs them. */
export function doctorChecks(f: DoctorFacts): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  const major = Number(/^v?(\d+)/.exec(f.nodeVersion)?.[1] ?? 0);
  checks.push(
    major >= 20
      ? ok("node", "required", `Node ${f.nodeVersion}`)
      : missing(
          "node",
          "required",
          `Node ${f.nodeVersion} is older than 20`,
          "install Node 20 or later (https://nodejs.org, or your distribution's nodejs package)",
        ),
  );
  const bwrap = f.programs.bwrap;
  checks.push(
    bwrap
      ? ok("bubblewrap", "required", bwrap)
      : missing("bubblewrap", "required", "bwrap is not on PATH", BWRAP_INSTALL),
  );
  if (f.sandboxSelfTest === undefined)
    checks.push(
      missing(
        "sandbox self-test",
        "required",
        "not run: bubblewrap is missing",
        "install bubblewrap first (above)",
      ),
    );
  else if (f.sandboxSelfTest === null)
    checks.push(
      ok("sandbox self-test", "required", "isolated: workspace writable, system read-only, no leaked env"),
    );
  else
    checks.push(
      missing(
        "sandbox self-test",
        "required",
        f.sandboxSelfTest.slice(0, 500),
        "bubblewrap needs unprivileged user namespaces: sudo sysctl -w kernel.unprivileged_userns_clone=1 " +
          "(Debian), or on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile " +
          "for bwrap; in a container, run it with user namespaces allowed (e.g. docker --privileged)",
      ),
    );
  if (f.seccomp)
    checks.push(
      f.seccomp.available
        ? ok("syscall filter", "required", f.seccomp.detail)
        : missing(
            "syscall filter",
            "optional",
            f.seccomp.detail,
            "loopgate has syscall tables for x86_64 and arm64 only; on another architecture, run agents you do not trust on one of those",
          ),
    );
  if (f.workspace)
    checks.push(
      f.workspace.error === null
        ? ok("run workspace", "optional", `${f.workspace.mode}: ${f.workspace.why}`)
        : missing(
            "run workspace",
            "required",
            f.workspace.error,
            "unset LOOPGATE_WORKSPACE (runs then use an overlay where one can be mounted, a copy elsewhere), or run loopgate as root on a kernel with overlayfs",
          ),
    );
  if (f.privileges)
    checks.push(
      f.privileges.error === null
        ? ok("sandbox user", "required", f.privileges.detail)
        : missing(
            "sandbox user",
            "required",
            f.privileges.error,
            "unset LOOPGATE_SANDBOX_UID / LOOPGATE_SANDBOX_GID (default 65534, nobody) or set them to an unprivileged account's ids",
          ),
    );
  checks.push(
    f.programs.git
      ? ok("git", "required", f.programs.git)
      : missing(
          "git",
          "required",
          "git is not on PATH (the judge's diffs use it)",
          "install git: sudo apt-get install -y git",
        ),
  );
  checks.push(
    f.gatePrograms.node
      ? ok("node for gates", "optional", f.gatePrograms.node)
      : missing(
          "node for gates",
          "optional",
          "no node in /usr/local/bin:/usr/bin:/bin, where gates look: a gate that runs node (the JS example's) cannot start",
          "install Node system-wide (NodeSource or your distribution's nodejs package); a Node under your home folder (nvm) is not visible to gates",
        ),
  );
  checks.push(
    f.gatePrograms.python3
      ? ok("python3", "optional", f.gatePrograms.python3)
      : missing(
          "python3",
          "optional",
          "no python3 in /usr/local/bin:/usr/bin:/bin, where gates look: the py-durations example's gates cannot run",
          "install it (sudo apt-get install -y python3) to run the Python example; nothing else needs it",
        ),
  );
  if (f.postgres) checks.push(...postgresChecks(f.postgres));
  else {
    checks.push(
      f.store.writable
        ? ok("store", "required", `${f.store.dir} is writable`)
        : missing(
            "store",
            "required",
            f.store.detail,
            "pass --store DIR (or set LOOPGATE_STORE) to a folder you can write, or fix the folder's permissions",
          ),
    );
    if (f.store.log !== undefined) checks.push(folderLogCheck(f.store.log));
  }
  checks.push(...providerChecks(f.env));
  for (const [name, package_] of [
    ["claude", "@anthropic-ai/claude-code"],
    ["codex", "@openai/codex"],
  ] as const) {
    const at = f.programs[name];
    checks.push(
      at
        ? ok(name, "optional", `${at} (for --builder '${name} …'; mount its install with --builder-mount)`)
        : skipped(name, `not installed; only needed for --builder '${name} …' (npm install -g ${package_})`),
    );
  }
  return checks;
}

/** A folder store's SQLite log: absent (nothing to check yet), sound, or what SQLite or loopgate found wrong. */
function folderLogCheck(log: NonNullable<DoctorFacts["store"]["log"]> | null): DoctorCheck {
  if (log === null)
    return skipped("store-integrity", "no events.db yet; the first command that records creates it");
  if (log.problems.length === 0)
    return ok(
      "store-integrity",
      "required",
      `${log.path}: opens as a loopgate log; SQLite's quick_check: ok`,
    );
  return missing(
    "store-integrity",
    "required",
    `${log.path}: ${log.problems.length} problem(s): ${log.problems.slice(0, 5).join("; ")}${log.problems.length > 5 ? "; …" : ""}`,
    "every command refuses this store until it is fixed: restore events.db from a backup, or move the store folder aside to start a new one (its runs are then not readable); loopgate repairs nothing by itself",
  );
}

/** A Postgres store: it answers, its schema is one this loopgate can use, and its log is sound. */
function postgresChecks(p: NonNullable<DoctorFacts["postgres"]>): DoctorCheck[] {
  if (p.error !== null || p.version === null)
    return [
      missing(
        "store",
        "required",
        p.error ?? `${p.label} did not answer`,
        `fix what the message names (pg_isready -h HOST -p PORT; createdb; the user, password or pg_hba.conf), or pass --store a folder`,
      ),
    ];
  const out = [ok("store", "required", `${p.label} answers`)];
  if (p.version > p.expected)
    out.push(
      missing(
        "store-schema",
        "required",
        `schema version ${p.version} is newer than this loopgate understands (${p.expected})`,
        "upgrade loopgate on this machine to the version that wrote the database",
      ),
    );
  else
    out.push(
      ok(
        "store-schema",
        "required",
        p.version === 0
          ? `no loopgate tables yet; the first command that writes creates them (version ${p.expected})`
          : p.version < p.expected
            ? `schema version ${p.version}; the next command that writes migrates it to ${p.expected}`
            : `schema version ${p.version} (current)`,
      ),
    );
  if (p.problems === null)
    out.push(skipped("store-integrity", "not checked: no current loopgate schema yet"));
  else if (p.problems.length === 0)
    out.push(
      ok(
        "store-integrity",
        "required",
        "every stream's revisions run 0..n without a gap, the stream index agrees, every position is accounted for",
      ),
    );
  else
    out.push(
      missing(
        "store-integrity",
        "required",
        `${p.problems.length} problem(s): ${p.problems.slice(0, 5).join("; ")}${p.problems.length > 5 ? "; …" : ""}`,
        "the log was changed outside loopgate (or the database lost committed data): restore it from a backup; loopgate repairs nothing by itself",
      ),
    );
  return out;
}

/** Provider keys and base URL, checked only when set: a key must not be blank, a base URL must be a URL. */
function providerChecks(env: DoctorFacts["env"]): DoctorCheck[] {
  const out: DoctorCheck[] = [];
  for (const name of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"] as const) {
    const v = env[name];
    if (v === undefined) continue;
    out.push(
      v.trim() === "" || /\s/.test(v.trim())
        ? missing(
            name,
            "optional",
            `${name} is set but ${v.trim() === "" ? "empty" : "contains whitespace"}`,
            `export ${name}=<your key> (no quotes or spaces), or unset it`,
          )
        : ok(name, "optional", `set (${v.length} characters; \`loopgate selftest\` makes one live request)`),
    );
  }
  const base = env.LOOPGATE_OPENAI_COMPATIBLE_BASE_URL;
  if (base !== undefined) {
    let valid = false;
    try {
      valid = ["http:", "https:"].includes(new URL(base).protocol);
    } catch {
      valid = false;
    }
    out.push(
      valid
        ? ok("LOOPGATE_OPENAI_COMPATIBLE_BASE_URL", "optional", base)
        : missing(
            "LOOPGATE_OPENAI_COMPATIBLE_BASE_URL",
            "optional",
            `${JSON.stringify(base.slice(0, 200))} is not an http(s) URL`,
            "set it to the server's API root, e.g. http://127.0.0.1:11434/v1",
          ),
    );
  }
  if (out.length === 0)
    out.push(
      skipped(
        "model provider",
        "no ANTHROPIC_API_KEY, OPENAI_API_KEY or LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: --model scripted:FILE works, a real model needs one",
      ),
    );
  return out;
}

/** The exit code and verdict of a list of checks. */
export function doctorReport(checks: DoctorCheck[]): DoctorReport {
  const bad = checks.filter((c) => c.state === "missing");
  if (bad.some((c) => c.need === "required")) return { checks, exit: 2, verdict: "required_missing" };
  if (bad.length) return { checks, exit: 1, verdict: "optional_missing" };
  return { checks, exit: 0, verdict: "ok" };
}

/** The report as lines for a terminal: one per check, its remedy under it, then the conclusion. */
export function formatDoctor(r: DoctorReport): string {
  const mark = { ok: "✓", missing: "✗", skipped: "–" } as const;
  const lines = r.checks.flatMap((c) => [
    `${mark[c.state]} ${c.id.padEnd(20)} ${c.state === "missing" ? `${c.need.toUpperCase()} MISSING: ` : ""}${c.detail}`,
    ...(c.remedy ? [`    fix: ${c.remedy}`] : []),
  ]);
  const end = {
    ok: "all good (exit 0)",
    optional_missing: "loopgate works; something optional is missing (exit 1)",
    required_missing: "something loopgate needs is missing (exit 2): fix the lines marked REQUIRED",
  }[r.verdict];
  return `${lines.join("\n")}\n\n${end}\n`;
}
