import { InfrastructureError } from "../../core/kernel/errors.js";
import { type SandboxMode, sandboxSelfTest } from "../../sandbox/bubblewrap.js";
import { resolveProgram } from "../../sandbox/environment.js";
import { agentShell } from "./bash.js";

/** Programs the file tools run (inside the sandbox, from the read-only system root). */
const FILE_TOOL_PROGRAMS = [
  "sh",
  "cat",
  "mkdir",
  "dirname",
  "find",
  "head",
  "tail",
  "wc",
  "od",
  "tr",
  "base64",
];

/**
 * Proves the agent tools can run isolated before a run relies on them: the bubblewrap self-test
 * (with mode "bubblewrap"), a shell for `bash`, and the programs the file tools use. Throws
 * InfrastructureError whose message says what to install, or how to opt out of the sandbox.
 */
export async function agentSandboxSelfTest(mode: SandboxMode = "bubblewrap"): Promise<void> {
  if (mode === "bubblewrap") await sandboxSelfTest();
  if (!agentShell())
    throw new InfrastructureError(
      "agent tools need a shell, but neither bash nor sh is in /usr/local/bin:/usr/bin:/bin; " +
        "install bash (Debian/Ubuntu: apt-get install -y bash)",
    );
  const missing = FILE_TOOL_PROGRAMS.filter((p) => !resolveProgram(p, "/"));
  if (missing.length)
    throw new InfrastructureError(
      `agent file tools need ${missing.join(", ")}, missing from /usr/local/bin:/usr/bin:/bin; ` +
        "install coreutils and findutils (Debian/Ubuntu: apt-get install -y coreutils findutils)",
    );
}

const proven = new Set<SandboxMode>();

/**
 * `agentSandboxSelfTest`, once per process and mode: an agent attempt calls it before its first tool call
 * can rely on the sandbox. A failure is not remembered (the remedy may be applied while the process runs).
 */
export async function ensureAgentSandbox(mode: SandboxMode): Promise<void> {
  if (proven.has(mode)) return;
  await agentSandboxSelfTest(mode);
  proven.add(mode);
}
