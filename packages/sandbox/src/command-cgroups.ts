// A cgroup per sandboxed command, for processes (`pids`) and memory. Owns: finding a controller this process
// may write (a cgroup v1 hierarchy of that controller, or a cgroup v2 directory with it delegated to us),
// giving each command a child group of its own with its limit (`pids.max`; `memory.limit_in_bytes` and no
// swap beyond it), kept in a small pool and reused once empty (creating and removing a cgroup per command
// cost more than the rest of the sandbox's start), killing whatever is left in it afterwards, and removing
// the pool's groups (and those of dead processes) when it can. Why: the process limit must hold when the
// gateway runs as root (the kernel never applies RLIMIT_NPROC to root), and RLIMIT_AS bounds each process's
// address space but not what a command keeps in memory-backed files (/tmp, /dev/shm, memfd) or across many
// processes. Does not own: moving the command into the groups (the engine's start gate writes its pid).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const GROUP_DIR = "agent-kernel-sandbox";

export interface CommandGroup {
  /** The `cgroup.procs` file the engine writes the command's first pid to. */
  readonly procsFile: string;
  /** Kills every process still in the group (SIGKILL), then gives it back; safe to call more than once. */
  dispose(): void;
}

export interface CgroupController {
  readonly kind: "pids" | "memory";
  readonly version: 1 | 2;
  /** The directory command groups are created in. */
  readonly parent: string;
  /** An empty group with its limit set (processes, or bytes of memory), for one command. */
  create(id: string, limit: number): CommandGroup;
}

/** How one controller's limit is written. */
interface Kind {
  readonly name: "pids" | "memory";
  setLimit(dir: string, version: 1 | 2, limit: number): void;
}

const PIDS: Kind = {
  name: "pids",
  setLimit(dir, _version, limit) {
    writeFileSync(join(dir, "pids.max"), String(limit));
  },
};

const MEMORY: Kind = {
  name: "memory",
  setLimit(dir, version, limit) {
    if (version === 2) {
      writeFileSync(join(dir, "memory.max"), String(limit));
      // Swap would let a command hold more than its limit.
      if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
      return;
    }
    // v1: memory plus swap may not be below memory alone, so the order depends on the direction.
    const memsw = join(dir, "memory.memsw.limit_in_bytes");
    const set = () => writeFileSync(join(dir, "memory.limit_in_bytes"), String(limit));
    if (!existsSync(memsw)) return set();
    try {
      set();
      writeFileSync(memsw, String(limit));
    } catch {
      writeFileSync(memsw, String(limit));
      set();
    }
  },
};

/** Idle groups kept for reuse. */
const POOL_SIZE = 8;
/** Checks (20 ms apart) for a disposed group to empty before it is given up. */
const RECYCLE_ATTEMPTS = 50;

function mountPoints(): { path: string; type: string; options: string }[] {
  let text: string;
  try {
    text = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [left = "", right = ""] = line.split(" - ");
      const fields = left.split(" ");
      const [type = "", , superOptions = ""] = right.split(" ");
      return { path: (fields[4] ?? "").replace(/\\040/g, " "), type, options: superOptions };
    });
}

function ownCgroupPaths(): Map<string, string> {
  const paths = new Map<string, string>();
  try {
    for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const match = /^\d+:([^:]*):(.*)$/.exec(line);
      if (match) paths.set(match[1] ?? "", match[2] ?? "/");
    }
  } catch {
    // not Linux, or /proc hidden
  }
  return paths;
}

function writable(dir: string): boolean {
  const probe = join(dir, `${GROUP_DIR}-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

function killAll(dir: string): void {
  // cgroup v2 has cgroup.kill; v1 needs the pids listed and killed until none is left (a forking process can
  // add one between reading and killing, hence the loop).
  const killFile = join(dir, "cgroup.kill");
  if (existsSync(killFile)) {
    try {
      writeFileSync(killFile, "1");
    } catch {
      // fall through to the v1 way
    }
  }
  for (let round = 0; round < 10; round++) {
    let pids: number[];
    try {
      pids = readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return;
    }
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
  }
}

function removeGroup(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // ENOENT: gone already; EBUSY: processes not reaped yet (a later gateway process removes it)
  }
}

function controllerAt(kind: Kind, version: 1 | 2, base: string): CgroupController | undefined {
  const parent = join(base, GROUP_DIR);
  try {
    mkdirSync(parent, { recursive: true });
  } catch {
    return undefined;
  }
  if (version === 2) {
    // Children of `parent` need the controller enabled in its subtree.
    try {
      writeFileSync(join(parent, "cgroup.subtree_control"), `+${kind.name}`);
    } catch {
      return undefined;
    }
  }
  if (!writable(parent)) return undefined;
  removeGroupsOfDeadProcesses(parent);
  const idle: string[] = [];
  const limits = new Map<string, number>();
  const setMax = (dir: string, limit: number) => {
    if (limits.get(dir) === limit) return;
    kind.setLimit(dir, version, limit);
    limits.set(dir, limit);
  };
  // Every group this process made: at exit the idle ones and any still recycling are killed and removed
  // (one still busy with unreaped processes is left for the next gateway's sweep of dead owners' groups).
  const made = new Set<string>();
  process.once("exit", () => {
    idle.length = 0;
    for (const dir of made) {
      killAll(dir);
      removeGroup(dir);
    }
  });
  const recycleLater = (dir: string, attempt: number): void => {
    const timer = setTimeout(
      () => {
        if (isEmpty(dir)) {
          if (idle.length < POOL_SIZE) idle.push(dir);
          else {
            removeGroup(dir);
            made.delete(dir);
          }
        } else if (attempt < RECYCLE_ATTEMPTS) {
          killAll(dir);
          recycleLater(dir, attempt + 1);
        }
        // Still busy after that: left for `removeGroupsOfDeadProcesses` of a later gateway process.
      },
      attempt === 0 ? 0 : 20,
    );
    timer.unref();
  };
  return {
    kind: kind.name,
    version,
    parent,
    create(id, limit) {
      let dir = idle.pop();
      if (dir === undefined) {
        dir = join(parent, `cmd-${process.pid}-${id}`);
        mkdirSync(dir);
        made.add(dir);
      }
      const groupDir = dir;
      try {
        setMax(groupDir, limit);
      } catch (error) {
        removeGroup(groupDir);
        throw error;
      }
      let disposed = false;
      return {
        procsFile: join(groupDir, "cgroup.procs"),
        dispose() {
          if (disposed) return;
          disposed = true;
          killAll(groupDir);
          // The killed processes leave the group once reaped, a moment later: recycle it then, off the
          // command's path (a synchronous wait here cost every command milliseconds).
          recycleLater(groupDir, 0);
        },
      };
    },
  };
}

function isEmpty(dir: string): boolean {
  try {
    return readFileSync(join(dir, "cgroup.procs"), "utf8").trim() === "";
  } catch {
    return false;
  }
}

/** Groups named after a process that no longer runs (it died before removing them). */
function removeGroupsOfDeadProcesses(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^cmd-(\d+)-/.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid === process.pid) continue;
    try {
      process.kill(pid, 0);
      continue;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EPERM") continue;
    }
    killAll(join(parent, name));
    removeGroup(join(parent, name));
  }
}

const found = new Map<Kind, CgroupController | undefined>();

/**
 * A controller of `kind` this process can use, or undefined (then only the rlimits hold). One per process
 * and kind: every engine shares its pool of groups.
 */
function findController(kind: Kind): CgroupController | undefined {
  if (!found.has(kind)) found.set(kind, locateController(kind));
  return found.get(kind);
}

/** The pids controller: the process limit of a root gateway's commands. */
export function findPidsController(): CgroupController | undefined {
  return findController(PIDS);
}

/** The memory controller: what a command holds in memory altogether, files in memory included. */
export function findMemoryController(): CgroupController | undefined {
  return findController(MEMORY);
}

function locateController(kind: Kind): CgroupController | undefined {
  if (process.platform !== "linux") return undefined;
  const own = ownCgroupPaths();
  const mounts = mountPoints();
  const v1 = mounts.find((mount) => mount.type === "cgroup" && mount.options.split(",").includes(kind.name));
  if (v1) {
    const controller = controllerAt(kind, 1, join(v1.path, own.get(kind.name) ?? "/"));
    if (controller) return controller;
  }
  const v2 = mounts.find((mount) => mount.type === "cgroup2");
  if (v2) {
    const ownPath = own.get("") ?? "/";
    // A v2 cgroup may hold processes or enable controllers for children, not both: only the directory above
    // ours, when delegated, can take our groups as siblings.
    try {
      const controllers = readFileSync(join(v2.path, "cgroup.controllers"), "utf8");
      if (!controllers.split(/\s+/).includes(kind.name)) return undefined;
    } catch {
      return undefined;
    }
    // In v2 one group holds every controller of a process; only the pids one is used there (a v2 memory
    // limit would have to share its group), so memory is limited by cgroup only on v1.
    if (kind !== PIDS) return undefined;
    return controllerAt(kind, 2, ownPath === "/" ? v2.path : join(v2.path, ownPath, ".."));
  }
  return undefined;
}
