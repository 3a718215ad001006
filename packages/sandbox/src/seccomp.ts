// The sandbox's seccomp filter, as the classic BPF program bwrap loads (`--seccomp FD`). Owns: the syscalls a
// sandboxed command may not make — the kernel keyring's (`add_key`, `request_key`, `keyctl`: a process keeps
// its parent's session keyring, so without this every sandbox could read and change the gateway's keys, and
// pass keys from one scope to another) — per architecture (x86-64 with its x32 and i386 ABIs, aarch64), and
// the program's encoding. Does not own: the other walls (namespaces, mounts, capabilities: bwrap-engine.ts).
// Everything else is allowed: the filter narrows, it is not the sandbox.

/** `struct seccomp_data` offsets. */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const ENOSYS = 38;

const X32_SYSCALL_BIT = 0x40000000;

/** The syscalls refused, per audit architecture: numbers of add_key, request_key, keyctl. */
const ARCHITECTURES: readonly {
  readonly arch: number;
  readonly denied: readonly number[];
  readonly x32?: true;
}[] = [
  { arch: 0xc000003e, denied: [248, 249, 250], x32: true }, // AUDIT_ARCH_X86_64 (x32 numbers carry bit 30)
  { arch: 0x40000003, denied: [286, 287, 288] }, // AUDIT_ARCH_I386
  { arch: 0xc00000b7, denied: [217, 218, 219] }, // AUDIT_ARCH_AARCH64
];

interface Instruction {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

/**
 * The filter as bytes (`struct sock_filter[]`, host byte order): keyring syscalls fail with ENOSYS (as if
 * the kernel had none, which programs handle), every other syscall is allowed.
 */
export function keyringSeccompFilter(): Uint8Array {
  const program: Instruction[] = [];
  // Jumps are relative; the deny and allow returns are the last two instructions, filled in at the end.
  const toDeny: number[] = [];
  const toAllow: number[] = [];
  program.push({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: ARCH_OFFSET });
  for (const { arch, denied, x32 } of ARCHITECTURES) {
    // if (arch == this) fall into its checks, else skip them.
    const checks = 1 + (x32 ? 1 : 0) + denied.length + 1;
    program.push({ code: BPF_JEQ_K, jt: 0, jf: checks, k: arch });
    program.push({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: NR_OFFSET });
    if (x32) {
      toDeny.push(program.length);
      program.push({ code: BPF_JGE_K, jt: 0, jf: 0, k: X32_SYSCALL_BIT });
    }
    for (const nr of denied) {
      toDeny.push(program.length);
      program.push({ code: BPF_JEQ_K, jt: 0, jf: 0, k: nr });
    }
    toAllow.push(program.length);
    program.push({ code: BPF_JEQ_K, jt: 0, jf: 0, k: 0xffffffff });
    // Back to the architecture for the next comparison.
    program.push({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: ARCH_OFFSET });
  }
  const allowAt = program.length;
  program.push({ code: BPF_RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ALLOW });
  const denyAt = program.length;
  program.push({ code: BPF_RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ERRNO | ENOSYS });
  const patched = program.map((instruction, index) => {
    if (toDeny.includes(index)) return { ...instruction, jt: denyAt - index - 1 };
    // The "done with this architecture" jump: always to allow (k never equals the syscall number on purpose,
    // so both branches go there).
    if (toAllow.includes(index)) {
      const offset = allowAt - index - 1;
      return { ...instruction, jt: offset, jf: offset };
    }
    return instruction;
  });
  for (const instruction of patched) {
    if (instruction.jt > 255 || instruction.jf > 255)
      throw new Error("seccomp program too long for its jumps");
  }
  const bytes = new Uint8Array(patched.length * 8);
  const view = new DataView(bytes.buffer);
  const little = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  patched.forEach((instruction, index) => {
    const at = index * 8;
    view.setUint16(at, instruction.code, little);
    view.setUint8(at + 2, instruction.jt);
    view.setUint8(at + 3, instruction.jf);
    view.setUint32(at + 4, instruction.k, little);
  });
  return bytes;
}
