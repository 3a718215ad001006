// What a bubblewrap sandbox looks like from inside: the bwrap argv (namespaces, the read-only system
// directories, the command's mounts, a private /proc, /dev and /tmp, the /etc files programs need), the
// limits prelude run before the command, its passwd and group, the environment it sees and, under a root
// gateway, the unprivileged host user it runs as. Owns: those pure descriptions. Does not own: starting,
// gating and running the sandbox, standbys or probing (bwrap-engine.ts), or which directories to mount
// (layout.ts).
import { lstatSync, readlinkSync, statSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import { SANDBOX_HOST_ID } from "./layout.ts";
import { keyringSeccompFilter } from "./seccomp.ts";
import type { ProcessLimitEnforcement, SandboxSettings } from "./types.ts";
import { SandboxUnavailableError } from "./types.ts";

/** Open files per process inside (the gateway's own limit may be far higher). */
const OPEN_FILES = 4096;

/** No keyring syscalls inside (seccomp.ts); built once. */
export const SECCOMP_FILTER = keyringSeccompFilter();

/** util-linux's setpriv: how a root gateway's sandbox leaves root before the command runs. */
const SETPRIV = "/usr/bin/setpriv";

/** The uid and gid commands run as inside (mapped to the gateway's own uid outside). */
export const SANDBOX_UID = 1000;
/** The `PATH` commands get inside the sandbox: the system's standard directories only. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Top-level system directories made visible read-only (a merged-/usr system has most as symlinks). */
const SYSTEM_DIRS = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"] as const;
/** Files and folders of /etc programs need to run; nothing with host secrets or identities. */
const ETC_ALWAYS = ["alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "bash.bashrc"];
/** Only with network on: name resolution and TLS roots. */
const ETC_NETWORK = [
  "resolv.conf",
  "hosts",
  "nsswitch.conf",
  "gai.conf",
  "ssl",
  "ca-certificates",
  "host.conf",
];

function systemBinds(): string[] {
  const args: string[] = [];
  for (const name of SYSTEM_DIRS) {
    const path = `/${name}`;
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
    else if (stat.isDirectory()) args.push("--ro-bind", path, path);
  }
  return args;
}

/**
 * The directories above the mounts that only the sandbox's own root holds (`/skills` above `/skills/weather`),
 * made 0755 first: bwrap would make them 0700 for the user it sets up as (root, under a root gateway), and the
 * sandbox user could not reach the mounts below. A parent inside another mount is that mount's (left alone).
 */
function mountParentDirs(mounts: readonly { readonly path: string }[]): string[] {
  const inAMount = (dir: string) =>
    mounts.some((mount) => dir === mount.path || dir.startsWith(`${mount.path.replace(/\/+$/, "")}/`));
  const dirs = new Set<string>();
  for (const mount of mounts) {
    for (let dir = dirname(mount.path); dir !== "/" && dir !== "."; dir = dirname(dir)) {
      if (!inAMount(dir)) dirs.add(dir);
    }
  }
  return [...dirs].sort((a, b) => a.length - b.length).flatMap((dir) => ["--perms", "0755", "--dir", dir]);
}

const DEVICES = ["null", "zero", "full", "random", "urandom", "tty"] as const;

function devBinds(shmBytes: number): string[] {
  return [
    "--perms",
    "0755",
    "--tmpfs",
    "/dev",
    ...DEVICES.flatMap((name) => ["--dev-bind-try", `/dev/${name}`, `/dev/${name}`]),
    "--symlink",
    "/proc/self/fd",
    "/dev/fd",
    "--symlink",
    "/proc/self/fd/0",
    "/dev/stdin",
    "--symlink",
    "/proc/self/fd/1",
    "/dev/stdout",
    "--symlink",
    "/proc/self/fd/2",
    "/dev/stderr",
    ...memoryTmpfs("/dev/shm", shmBytes),
    "--remount-ro",
    "/dev",
  ];
}

/** A world-writable (sticky) memory-backed directory of at most `bytes`. */
function memoryTmpfs(path: string, bytes: number): string[] {
  return ["--perms", "1777", "--size", String(bytes), "--tmpfs", path];
}

function etcBinds(network: boolean): string[] {
  const names = network ? [...ETC_ALWAYS, ...ETC_NETWORK] : ETC_ALWAYS;
  return names.flatMap((name) => ["--ro-bind-try", `/etc/${name}`, `/etc/${name}`]);
}

/** The sandbox's /etc/passwd and /etc/group: root, the sandbox user and nobody only. */
export const PASSWD = `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${SANDBOX_UID}:${SANDBOX_UID}:sandbox:/tmp:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
export const GROUP = `root:x:0:\nsandbox:x:${SANDBOX_UID}:\nnogroup:x:65534:\n`;

/** Reads the command's text from descriptor 7 up to a NUL, closes it, and runs it in this shell, as
 * `bash -c <command>` would (with `$0` "bash"). */
const READ_AND_RUN = [
  `IFS= read -r -d '' __sandbox_command <&7 || exit 125`,
  "exec 7<&-",
  'eval "unset __sandbox_command; $__sandbox_command"',
].join("\n");

/**
 * The shell script bwrap starts: set the limits (soft and hard, so the command cannot raise them), close
 * every descriptor the gateway may have let through, then read and run the command. Under a root gateway
 * (`asRoot`) the script starts as the sandbox's own root (host root, mapped only for bwrap's setup, with
 * just the capabilities this step needs): it forbids new user namespaces inside (their per-namespace limit,
 * 0), then becomes the sandbox user — a host uid other than root — with no capabilities at all, and only
 * then reads the command.
 */
function limitsPrelude(
  command: SandboxSettings,
  processLimit: ProcessLimitEnforcement,
  asRoot: boolean,
): string {
  const limits = command.limits;
  const kib = (bytes: number) => Math.max(1, Math.floor(bytes / 1024));
  const flags = [
    `-c 0`,
    `-n ${OPEN_FILES}`,
    `-v ${kib(limits.memoryBytes)}`,
    `-f ${kib(limits.maxFileBytes)}`,
  ];
  // RLIMIT_NPROC in a fresh user namespace counts only the command's own processes; under a cgroup it is
  // set too (harmless, and it holds if the cgroup step is ever skipped for a non-root gateway).
  if (processLimit !== "none") flags.push(`-u ${limits.maxProcesses}`);
  const fail = (what: string) => `{ echo "sandbox: ${what}" >&2; exit 125; }`;
  const lines = [
    // bash's ulimit sets soft and hard limits together: the command cannot raise them again.
    `ulimit ${flags.join(" ")} || ${fail("could not set limits")}`,
    // Nothing of the gateway's open files reaches the command: every descriptor but 0-2 and the command's 7.
    'for __sandbox_fd in /proc/self/fd/*; do __sandbox_fd=${__sandbox_fd##*/}; case $__sandbox_fd in 0|1|2|7) ;; *) eval "exec $__sandbox_fd>&-" 2>/dev/null ;; esac; done; unset __sandbox_fd',
  ];
  if (!asRoot) return [...lines, READ_AND_RUN].join("\n");
  return [
    ...lines,
    `echo 0 > /proc/sys/user/max_user_namespaces || ${fail("could not forbid user namespaces")}`,
    `exec ${SETPRIV} --reuid=${SANDBOX_UID} --regid=${SANDBOX_UID} --clear-groups --inh-caps=-all --bounding-set=-all -- /bin/bash --norc -c "$1" bash || ${fail("could not leave root")}`,
  ].join("\n");
}

/**
 * The bwrap arguments for a command's settings (exported for tests and `doctor`: nothing here runs
 * anything). The command's text is not in them: the sandbox's shell reads it from descriptor 7.
 */
export function bwrapArgs(
  command: SandboxSettings,
  processLimit: ProcessLimitEnforcement,
  /**
   * The gateway runs as root: bwrap sets up as root (its user namespace's uid map is written by the caller,
   * `--userns-block-fd`), and the script becomes the sandbox user before the command (see `limitsPrelude`).
   */
  asRoot = false,
): string[] {
  for (const mount of command.mounts) {
    if (!isAbsolute(mount.path) || !isAbsolute(mount.hostPath)) {
      throw new Error(`sandbox mount paths must be absolute: ${mount.path} <- ${mount.hostPath}`);
    }
  }
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(command.network ? ["--share-net"] : ["--unshare-net"]),
    ...(asRoot
      ? // Only what the script needs to forbid nested user namespaces and change uid; it drops them all.
        ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SYS_RESOURCE"]
      : [
          "--uid",
          String(SANDBOX_UID),
          "--gid",
          String(SANDBOX_UID),
          "--cap-drop",
          "ALL",
          "--disable-userns",
        ]),
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    ...systemBinds(),
    // bwrap makes the parents of its mount points 0700 for the user it sets up as (root, under a root
    // gateway): /etc must stay readable for the sandbox user.
    "--perms",
    "0755",
    "--dir",
    "/etc",
    ...etcBinds(command.network),
    "--perms",
    "0444",
    "--ro-bind-data",
    "3",
    "/etc/passwd",
    "--perms",
    "0444",
    "--ro-bind-data",
    "4",
    "/etc/group",
    "--seccomp",
    "8",
    "--proc",
    "/proc",
    // A /dev of our own instead of bwrap's --dev: only the harmless device nodes and no pty multiplexer (every
    // pty a command opened would come out of the host's pool), bounded shared memory, then read-only (device
    // nodes still work).
    ...devBinds(command.limits.tmpBytes),
    ...memoryTmpfs("/tmp", command.limits.tmpBytes),
  ];
  // Shorter paths first, so a mount nested in another is mounted over it.
  const mounts = [...command.mounts].sort((a, b) => a.path.length - b.path.length);
  args.push(...mountParentDirs(mounts));
  for (const mount of mounts) args.push(mount.writable ? "--bind" : "--ro-bind", mount.hostPath, mount.path);
  // The root itself (a tmpfs bwrap made) read-only: a write outside the mounts and /tmp fails instead of
  // landing somewhere the command could mistake for the host.
  args.push("--remount-ro", "/");
  args.push("--chdir", command.cwd);
  // -p (privileged mode) for the root prelude: no function or option imports from the environment.
  args.push(
    "--",
    "/bin/bash",
    "--norc",
    ...(asRoot ? ["-p"] : []),
    "-c",
    limitsPrelude(command, processLimit, asRoot),
    "bash",
  );
  if (asRoot) args.push(READ_AND_RUN);
  return args;
}

/**
 * The host uid and gid a root gateway's sandboxed commands run as: the owner of the working directory's mount
 * (the scope's sandbox workspace, made for `SANDBOX_HOST_ID`, or an agent workspace mounted read-write).
 * Never root: the sandbox's user would be host root without capabilities, which still writes any root-owned
 * file it can reach (`/proc/sys/kernel/core_pattern` runs a program as root). A root-owned working directory
 * is refused.
 */
export function sandboxUserOfRootGateway(settings: SandboxSettings): { uid: number; gid: number } {
  const mount = [...settings.mounts]
    .sort((a, b) => b.path.length - a.path.length)
    .find((candidate) => settings.cwd === candidate.path || settings.cwd.startsWith(`${candidate.path}/`));
  if (mount === undefined) throw new Error(`sandbox cwd ${settings.cwd} is not inside any mount`);
  const owner = statSync(mount.hostPath);
  if (owner.uid === 0 || owner.gid === 0) {
    throw new SandboxUnavailableError(
      "bwrap",
      `the gateway runs as root and the sandbox's working directory ${mount.hostPath} belongs to root, so its commands would run as root on the host`,
      `give that directory to an unprivileged user and group (e.g. \`chown -R ${SANDBOX_HOST_ID}:${SANDBOX_HOST_ID} ${mount.hostPath}\`; the sandbox runs as its owner), or run the gateway as an ordinary user`,
    );
  }
  return { uid: owner.uid, gid: owner.gid };
}

/** The environment a sandboxed command sees: the caller's, with paths that exist inside. */
export function sandboxEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const kept = Object.fromEntries(
    Object.entries(env).filter(
      // A locale that names a path makes the C library load locale data from there, in the root window too.
      ([name, value]) =>
        !STARTUP_VARIABLE.test(name) && !(/^(LANG|LANGUAGE|LC_.*)$/.test(name) && value.includes("/")),
    ),
  );
  return { ...kept, PATH: SANDBOX_PATH, HOME: "/tmp", TMPDIR: "/tmp", USER: "sandbox", LOGNAME: "sandbox" };
}

/**
 * Variables that make the dynamic loader or bash run code at start-up. The sandbox's first shell (and, under a
 * root gateway, setpriv) runs before the command with more rights than the command gets: none of these may
 * reach it, whatever a deployment allows.
 */
const STARTUP_VARIABLE =
  /^(LD_.*|BASH_ENV|ENV|BASHOPTS|SHELLOPTS|PS4|PROMPT_COMMAND|BASH_FUNC_.*|GLOBIGNORE|CDPATH|GCONV_PATH|NLSPATH|LOCPATH|HOSTALIASES|RES_OPTIONS|LOCALDOMAIN|MALLOC_.*|GLIBC_TUNABLES|IFS)$/;
