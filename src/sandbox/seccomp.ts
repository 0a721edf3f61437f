// The seccomp filter of every bubblewrap sandbox: a classic BPF program, written here byte by byte (no
// libseccomp), that bwrap loads from a file descriptor (`--seccomp FD`) right before it execs the
// sandboxed program, which inherits it with everything it starts.
//
// Why: a sandboxed process shares its uid with every other process of its sandbox (an agent's tools with
// the agent, a gate's test with the gate runner). Without a filter it can take another one's descriptors
// (pidfd_getfd), read or write its memory (process_vm_readv/writev) or trace it (ptrace), for instance
// Claude Code's stdout, which loopgate reads as the record of the tool calls that really ran
// (docs/explanation/sandbox.md). The filter denies those calls with EPERM, and kills a process that makes
// a system call under another ABI (i386 `int 0x80`, x32), where the numbers below would not apply.

/** The system calls by which one process reaches into another, denied with EPERM. */
export const DENIED_SYSCALLS = [
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "pidfd_getfd",
  "process_madvise",
] as const;

export type DeniedSyscall = (typeof DENIED_SYSCALLS)[number];

/** One architecture: the AUDIT_ARCH value seccomp reports for its native ABI, and its syscall numbers. */
interface SyscallTable {
  /** AUDIT_ARCH_* (linux/audit.h): the ELF machine with the 64-bit and little-endian bits. */
  auditArch: number;
  /** x86_64 also accepts x32 calls under its own AUDIT_ARCH, marked by this bit in the number. */
  x32Bit: number | null;
  numbers: Readonly<Record<DeniedSyscall, number>>;
}

const AUDIT_ARCH_64BIT = 0x8000_0000;
const AUDIT_ARCH_LE = 0x4000_0000;

/**
 * By Node's `process.arch`. x86_64: the kernel's arch/x86/entry/syscalls/syscall_64.tbl (the uapi
 * asm/unistd_64.h); arm64 uses the generic table (uapi asm-generic/unistd.h).
 */
const TABLES: Readonly<Record<string, SyscallTable>> = {
  x64: {
    auditArch: 62 | AUDIT_ARCH_64BIT | AUDIT_ARCH_LE, // EM_X86_64
    x32Bit: 0x4000_0000,
    numbers: {
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      pidfd_getfd: 438,
      process_madvise: 440,
    },
  },
  arm64: {
    auditArch: 183 | AUDIT_ARCH_64BIT | AUDIT_ARCH_LE, // EM_AARCH64
    x32Bit: null,
    numbers: {
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      pidfd_getfd: 438,
      process_madvise: 440,
    },
  },
};

// Classic BPF (linux/bpf_common.h, linux/seccomp.h).
const LD_W_ABS = 0x00 | 0x00 | 0x20;
const JMP_JEQ_K = 0x05 | 0x10 | 0x00;
const JMP_JGE_K = 0x05 | 0x30 | 0x00;
const RET_K = 0x06 | 0x00;
const SECCOMP_RET_KILL_PROCESS = 0x8000_0000;
const SECCOMP_RET_ERRNO = 0x0005_0000;
const SECCOMP_RET_ALLOW = 0x7fff_0000;
const EPERM = 1;
/** Offsets in struct seccomp_data: `int nr` then `__u32 arch`. */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

// `>>> 0`: JavaScript's `|` yields a signed 32-bit number; k is unsigned.
const ins = (code: number, k: number, jt = 0, jf = 0): Instruction => ({ code, jt, jf, k: k >>> 0 });

/** The filter as instructions, or null when loopgate has no syscall table for `arch`. */
export function seccompInstructions(arch: string = process.arch): Instruction[] | null {
  const table = TABLES[arch];
  if (!table) return null;
  const prog: Instruction[] = [
    ins(LD_W_ABS, ARCH_OFFSET),
    ins(JMP_JEQ_K, table.auditArch, 1, 0),
    ins(RET_K, SECCOMP_RET_KILL_PROCESS),
    ins(LD_W_ABS, NR_OFFSET),
  ];
  if (table.x32Bit !== null)
    // nr -1 is no call (a tracer outside skipping one), as libseccomp lets it through to ENOSYS.
    prog.push(
      ins(JMP_JGE_K, table.x32Bit, 0, 2),
      ins(JMP_JEQ_K, 0xffff_ffff, 1, 0),
      ins(RET_K, SECCOMP_RET_KILL_PROCESS),
    );
  const denied = DENIED_SYSCALLS.map((name) => table.numbers[name]);
  // Each match jumps over the rest of the list and the ALLOW to the ERRNO at the end.
  denied.forEach((nr, i) => {
    prog.push(ins(JMP_JEQ_K, nr, denied.length - i, 0));
  });
  prog.push(ins(RET_K, SECCOMP_RET_ALLOW), ins(RET_K, SECCOMP_RET_ERRNO | EPERM));
  return prog;
}

/**
 * The filter as bwrap reads it: an array of struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}, 8 bytes
 * each in the machine's byte order (little-endian on both tables' architectures). Null: no table for `arch`.
 */
export function seccompProgram(arch: string = process.arch): Buffer | null {
  const prog = seccompInstructions(arch);
  if (!prog) return null;
  const buf = Buffer.alloc(prog.length * 8);
  prog.forEach((p, i) => {
    buf.writeUInt16LE(p.code, i * 8);
    buf.writeUInt8(p.jt, i * 8 + 2);
    buf.writeUInt8(p.jf, i * 8 + 3);
    buf.writeUInt32LE(p.k, i * 8 + 4);
  });
  return buf;
}

/** The syscall numbers denied on `arch` (for tests and `doctor`), or null without a table. */
export function deniedSyscallNumbers(
  arch: string = process.arch,
): Readonly<Record<DeniedSyscall, number>> | null {
  return TABLES[arch]?.numbers ?? null;
}

/** What `doctor` says about the filter on this machine. */
export function seccompSummary(arch: string = process.arch): string {
  return TABLES[arch]
    ? `denied with EPERM: ${DENIED_SYSCALLS.join(", ")}; a call under another ABI kills the process`
    : `no syscall table for ${arch}: sandboxes run without the filter, so a sandboxed process may ptrace another of its sandbox`;
}
