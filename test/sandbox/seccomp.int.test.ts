import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapArgv, findBwrap, runSandboxed, type SandboxSpec } from "../../src/sandbox/bubblewrap.js";
import { scrubbedEnv } from "../../src/sandbox/environment.js";
import { runProcess } from "../../src/sandbox/process.js";
import { deniedSyscallNumbers } from "../../src/sandbox/seccomp.js";

// The sandbox's seccomp filter, tried from inside by the means an agent's tool would use: python3's ctypes
// making raw system calls against a sibling process of the same sandbox (same uid). The numbers the probe
// uses are spelled here from the kernel's x86_64 table, not taken from seccomp.ts.
const X86_64 = process.arch === "x64";
const PYTHON = "/usr/bin/python3";
const canRun = X86_64 && existsSync(PYTHON) && findBwrap() !== null;

/**
 * Starts a sibling (`sleep`), then prints `NAME RESULT ERRNO` for each reach-in call on it; pidfd_open is
 * the control: it only names the process, and it must work, so an EPERM below is the filter's and not a
 * missing or foreign process.
 */
const REACH_IN = `
import ctypes, errno, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
sib = subprocess.Popen(["/bin/sleep", "30"])
pid = sib.pid
def call(name, *args):
    ctypes.set_errno(0)
    # As longs: a Python int passed to a variadic function is a C int, its register's upper half undefined.
    r = libc.syscall(*[ctypes.c_long(x) if isinstance(x, int) else x for x in args])
    e = ctypes.get_errno()
    print(name, r, errno.errorcode.get(e, str(e)) if r < 0 else "-", flush=True)
    return r
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(16)
local = iovec(ctypes.addressof(buf), 16)
# An address mapped in every process here: the sibling is a fresh exec, so read its stack's address.
remote_addr = int(open("/proc/%d/maps" % pid).read().split("[stack]")[0].splitlines()[-1].split("-")[0], 16)
remote = iovec(remote_addr, 16)
pfd = call("pidfd_open", 434, pid, 0)
call("pidfd_getfd", 438, pfd, 1, 0)
call("process_vm_readv", 310, pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
call("process_vm_writev", 311, pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
call("process_madvise", 440, pfd, ctypes.byref(local), 1, 21, 0)
call("ptrace_attach", 101, 16, pid, 0, 0)
for mode in ("rb", "r+b"):
    try:
        open("/proc/%d/mem" % pid, mode).close()
        print("proc_mem_" + mode.replace("+", "w"), 0, "-", flush=True)
    except OSError as ex:
        print("proc_mem_" + mode.replace("+", "w"), -1, errno.errorcode.get(ex.errno, str(ex.errno)), flush=True)
sib.kill()
print("done", flush=True)
`;

/** Machine code run from an executable page: `mov eax, NR; <trap>; ret`, printing what eax came back as. */
const FOREIGN_ABI = `
import ctypes, mmap, sys
code = bytes.fromhex(sys.argv[1])
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
fn = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
print("returned", fn(), flush=True)
`;
/** i386 getpid (20) through `int 0x80`: seccomp sees AUDIT_ARCH_I386. */
const I386_GETPID = "b814000000cd80c3";
/** x32 getpid: x86_64's 39 with the x32 bit 0x40000000, through `syscall`. */
const X32_GETPID = "b827000040" + "0f05c3";

/** The workspace of the filtered runs (handed to the sandbox user), and an open folder for the control runs. */
let dir: string;
let open: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lg-seccomp-"));
  open = await mkdtemp(join(tmpdir(), "lg-seccomp-open-"));
  await chmod(open, 0o755);
  for (const d of [dir, open]) {
    await writeFile(join(d, "reach-in.py"), REACH_IN);
    await writeFile(join(d, "foreign-abi.py"), FOREIGN_ABI);
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(open, { recursive: true, force: true });
});

const spec = (argv: string[], extra: Partial<SandboxSpec> = {}): SandboxSpec => ({
  argv,
  cwd: dir,
  writable: [dir],
  readonly: [],
  env: scrubbedEnv({ home: dir }),
  network: false,
  timeoutMs: 30_000,
  ...extra,
});

/**
 * The same sandbox without these measures: bwrap started directly as the caller, no `--seccomp`, /proc not
 * remounted read-only, in a folder open to it (a root caller keeps no capability in the sandbox, so it could
 * not enter the sandbox user's workspace).
 */
const unfiltered = (argv: string[]) =>
  runProcess(
    withoutReadOnlyProc(
      bubblewrapArgv(spec(argv, { cwd: open, writable: [], readonly: [open] }), findBwrap() ?? "bwrap"),
    ),
    {
      cwd: "/",
      env: scrubbedEnv({ home: dir }),
      timeoutMs: 30_000,
    },
  );

function withoutReadOnlyProc(argv: string[]): string[] {
  const i = argv.findIndex((a, j) => a === "--remount-ro" && argv[j + 1] === "/proc");
  expect(i).toBeGreaterThan(0);
  return [...argv.slice(0, i), ...argv.slice(i + 2)];
}

const results = (out: string) =>
  new Map([...out.matchAll(/^(\w+) (-?\d+) (\S+)$/gm)].map((m) => [m[1], { r: Number(m[2]), errno: m[3] }]));

describe.skipIf(!canRun)("the sandbox's seccomp filter (x86_64)", () => {
  it("uses the kernel's x86_64 numbers", () => {
    expect(deniedSyscallNumbers("x64")).toEqual({
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      pidfd_getfd: 438,
      process_madvise: 440,
    });
  });

  it("denies ptrace, process_vm_readv/writev, pidfd_getfd and process_madvise on a sibling with EPERM", async () => {
    const r = await runSandboxed(spec([PYTHON, "reach-in.py"]), "bubblewrap");
    console.log(`filtered probe (exit ${r.exitCode}):\n${r.output}`);
    expect(r.exitCode).toBe(0);
    const got = results(r.output);
    expect(got.get("pidfd_open")?.r).toBeGreaterThanOrEqual(0);
    for (const name of [
      "pidfd_getfd",
      "process_vm_readv",
      "process_vm_writev",
      "process_madvise",
      "ptrace_attach",
    ])
      expect({ name, ...got.get(name) }).toEqual({ name, r: -1, errno: "EPERM" });
    // Not a system call: /proc/PID/mem opened for writing. /proc is mounted read-only; reading stays allowed.
    expect(got.get("proc_mem_rwb")).toEqual({ r: -1, errno: "EROFS" });
    expect(got.get("proc_mem_rb")?.r).toBe(0);
  });

  it("the probe sees the reach-in succeed in the same sandbox without the filter", async () => {
    const r = await unfiltered([PYTHON, "reach-in.py"]);
    console.log(`unfiltered probe (exit ${r.exitCode}):\n${r.output}`);
    const got = results(r.output);
    expect(got.get("pidfd_getfd")?.r).toBeGreaterThanOrEqual(0);
    expect(got.get("process_vm_readv")?.r).toBe(16);
    expect(got.get("ptrace_attach")?.r).toBe(0);
    expect(got.get("proc_mem_rwb")?.r).toBe(0);
  });

  it("kills a process that makes a system call under the i386 or x32 ABI", async () => {
    for (const [abi, code] of [
      ["i386", I386_GETPID],
      ["x32", X32_GETPID],
    ] as const) {
      const control = await unfiltered([PYTHON, "foreign-abi.py", code]);
      const filtered = await runSandboxed(spec([PYTHON, "foreign-abi.py", code]), "bubblewrap");
      console.log(
        `${abi}: unfiltered exit ${control.exitCode}/${control.signal}: ${control.output.trim()}; ` +
          `filtered exit ${filtered.exitCode}/${filtered.signal}: ${filtered.output.trim()}`,
      );
      // Without the filter the call returns (a pid, or -ENOSYS on a kernel without that ABI): the probe
      // itself works, so a death with the filter is the filter's.
      expect(control.exitCode).toBe(0);
      expect(control.output).toMatch(/^returned -?\d+$/m);
      // The sandbox's init (bwrap) reports a child killed by SIGSYS (31) as exit 128 + 31.
      expect(filtered.output).not.toMatch(/returned/);
      expect(filtered.exitCode).toBe(128 + 31);
    }
  });

  it("leaves normal work running: node, node --test, git, python, a shell pipeline", async () => {
    await writeFile(
      join(dir, "t.test.mjs"),
      'import test from "node:test"; import assert from "node:assert"; test("adds", () => assert.equal(1 + 1, 2));\n',
    );
    const script = [
      "set -e",
      "node -e 'console.log(\"node\", 6 * 7)'",
      "node --test t.test.mjs >/dev/null && echo node-test-ok",
      "git init -q repo && cd repo && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && git log --oneline | wc -l | sed 's/^/commits /' && cd ..",
      `${PYTHON} -c 'import subprocess; print("python", subprocess.run(["echo","sub"],capture_output=True,text=True).stdout.strip())'`,
      "seq 1 100 | sort -rn | head -1 | sed 's/^/pipeline /'",
      "ls -l /proc/self/fd >fds.txt",
      "sed -n 's/.* \\([0-9]*\\) -> socket:.*/socket-fd \\1/p' fds.txt",
    ].join("\n");
    const r = await runSandboxed(spec(["/bin/sh", "-c", script]), "bubblewrap");
    console.log(`normal work (exit ${r.exitCode}, ${r.durationMs} ms):\n${r.output}`);
    expect(r.exitCode).toBe(0);
    expect(r.output).toContain("node 42");
    expect(r.output).toContain("node-test-ok");
    expect(r.output).toContain("commits 1");
    expect(r.output).toContain("python sub");
    expect(r.output).toContain("pipeline 100");
    // The filter came on a socket at descriptor 3 and bwrap closed it: `ls` (stdout a file) holds one socket,
    // its stderr.
    expect([...r.output.matchAll(/^socket-fd (\d+)$/gm)].map((m) => m[1])).toEqual(["2"]);
  });

  it("holds in every process the sandbox starts, and only with the filter", async () => {
    const r = await runSandboxed(
      spec(["/bin/sh", "-c", "sh -c 'sed -n s/^Seccomp:[[:space:]]*/mode=/p /proc/self/status'"]),
      "bubblewrap",
    );
    expect(r.output.trim()).toBe("mode=2");
    const bare = await unfiltered([
      "/bin/sh",
      "-c",
      "sed -n 's/^Seccomp:[[:space:]]*/mode=/p' /proc/self/status",
    ]);
    expect(bare.output.trim()).toBe("mode=0");
  });
});

it.runIf(!canRun)("skips the seccomp probes", () => {
  console.log(`skipped: needs x86_64 (${process.arch}), ${PYTHON} and bwrap`);
});
