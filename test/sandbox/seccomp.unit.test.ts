import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bubblewrapArgv, type SandboxSpec } from "../../src/sandbox/bubblewrap.js";
import {
  DENIED_SYSCALLS,
  deniedSyscallNumbers,
  seccompInstructions,
  seccompProgram,
  seccompSummary,
} from "../../src/sandbox/seccomp.js";

/** `#define __NR_name N` from a kernel uapi header, where the machine has it. */
function headerNumbers(path: string): Map<string, number> | null {
  if (!existsSync(path)) return null;
  const text = readFileSync(path, "utf8");
  return new Map(
    [...text.matchAll(/^#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$/gm)].map((m) => [m[1] ?? "", Number(m[2])]),
  );
}

const HEADERS = {
  x64: "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
  arm64: "/usr/include/asm-generic/unistd.h",
} as const;

/**
 * Runs a classic BPF program the way the kernel does for seccomp, over only the instructions the filter
 * uses (LD W ABS, JEQ K, JGE K, RET K): an independent reading of the bytes, not the builder's structures.
 */
function runFilter(bytes: Buffer, data: { nr: number; arch: number }): number {
  let pc = 0;
  let a = 0;
  for (let steps = 0; steps < 1000; steps++) {
    const code = bytes.readUInt16LE(pc * 8);
    const jt = bytes.readUInt8(pc * 8 + 2);
    const jf = bytes.readUInt8(pc * 8 + 3);
    const k = bytes.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) a = k === 0 ? data.nr >>> 0 : k === 4 ? data.arch >>> 0 : Number.NaN;
    else if (code === 0x15) pc += a === k ? jt : jf;
    else if (code === 0x35) pc += a >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected BPF code ${code}`);
    pc += 1;
  }
  throw new Error("no return");
}

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const KILL_PROCESS = 0x80000000;
// linux/audit.h: EM_* | __AUDIT_ARCH_64BIT (0x80000000) | __AUDIT_ARCH_LE (0x40000000).
const AUDIT_ARCH = { x64: 0xc000003e, arm64: 0xc00000b7, i386: 0x40000003, arm: 0x40000028 };

describe("the seccomp filter's syscall tables", () => {
  for (const [arch, header] of Object.entries(HEADERS))
    it(`match the kernel's own header for ${arch}, where this machine has it`, () => {
      const fromHeader = headerNumbers(header);
      if (!fromHeader) return console.log(`skipped: no ${header} here`);
      const ours = deniedSyscallNumbers(arch);
      for (const name of DENIED_SYSCALLS)
        expect({ name, nr: ours?.[name] }).toEqual({ name, nr: fromHeader.get(name) });
    });

  it("refuses to build a filter for an architecture without a table, and says so", () => {
    expect(seccompProgram("riscv64")).toBeNull();
    expect(seccompInstructions("ia32")).toBeNull();
    expect(seccompSummary("riscv64")).toMatch(/no syscall table for riscv64/);
    expect(seccompSummary("x64")).toMatch(
      /ptrace, process_vm_readv, process_vm_writev, pidfd_getfd, process_madvise/,
    );
  });
});

describe("the seccomp filter's program", () => {
  const cases = [
    [
      "x64",
      AUDIT_ARCH.x64,
      { ptrace: 101, pidfd_getfd: 438, process_vm_readv: 310, process_vm_writev: 311 },
      39,
    ],
    [
      "arm64",
      AUDIT_ARCH.arm64,
      { ptrace: 117, pidfd_getfd: 438, process_vm_readv: 270, process_vm_writev: 271 },
      172,
    ],
  ] as const;
  for (const [arch, native, denied, getpid] of cases)
    it(`on ${arch}: EPERM for the reach-in calls, ALLOW for others, KILL under another ABI`, () => {
      const bytes = seccompProgram(arch);
      if (!bytes) throw new Error("no program");
      expect(bytes.length % 8).toBe(0);
      for (const [name, nr] of Object.entries(denied))
        expect({ name, ret: runFilter(bytes, { nr, arch: native }) }).toEqual({ name, ret: EPERM });
      for (const nr of [0, 1, 2, getpid, 59, 221, 434, 437, 439, 0xffffffff])
        expect({ nr, ret: runFilter(bytes, { nr, arch: native }) }).toEqual({ nr, ret: ALLOW });
      for (const foreign of [
        AUDIT_ARCH.i386,
        AUDIT_ARCH.arm,
        arch === "x64" ? AUDIT_ARCH.arm64 : AUDIT_ARCH.x64,
      ])
        expect(runFilter(bytes, { nr: getpid, arch: foreign })).toBe(KILL_PROCESS);
    });

  it("on x64: a call numbered in the x32 range is killed, the x32 twin of a denied call too", () => {
    const bytes = seccompProgram("x64");
    if (!bytes) throw new Error("no program");
    for (const nr of [0x40000000 + 39, 0x40000000 + 101, 0x7fffffff])
      expect(runFilter(bytes, { nr, arch: AUDIT_ARCH.x64 })).toBe(KILL_PROCESS);
  });
});

describe("bwrap's argv for the filter", () => {
  const spec: SandboxSpec = {
    argv: ["/bin/true"],
    cwd: "/w",
    writable: ["/w"],
    readonly: [],
    env: {},
    network: false,
    timeoutMs: 1000,
  };
  const pairAt = (argv: string[], a: string, b: string) =>
    argv.findIndex((x, i) => x === a && argv[i + 1] === b);

  it("passes --seccomp FD only when given a descriptor, before the program's `--`", () => {
    const argv = bubblewrapArgv(spec, "bwrap", undefined, 3);
    expect(pairAt(argv, "--seccomp", "3")).toBeGreaterThan(0);
    expect(pairAt(argv, "--seccomp", "3")).toBeLessThan(argv.indexOf("--"));
    expect(bubblewrapArgv(spec)).not.toContain("--seccomp");
  });

  it("remounts /proc read-only right after mounting it", () => {
    const argv = bubblewrapArgv(spec);
    expect(pairAt(argv, "--remount-ro", "/proc")).toBe(pairAt(argv, "--proc", "/proc") + 2);
  });
});
