// Where the file tools touch files. Owns: pi's `WriteOperations` / `EditOperations` for both kinds of session,
// the read tool's source in a sandboxed one (read-tool.ts has the host's), and the lexical check of a path in a
// sandbox's view.
//
// Sandboxed: every access is a short shell command run by the session's engine, like `exec` — so the path is
// resolved by the kernel inside the sandbox's mount namespace, as the sandbox's user. Nothing is opened or
// followed on the host: a link swapped in by a racing `exec` can only lead where the sandbox already sees, and
// a FIFO can only block a sandboxed command, which the engine's wall time kills. Before anything runs, the path
// is checked lexically against the view, for clear messages ("outside the workspace", "read-only").
//
// Unsandboxed: the host view's checks stay (path-view.ts resolves links and refuses those leaving the
// workspace); files are then opened with O_NOFOLLOW | O_NONBLOCK and `fstat`ed, so a link appearing at the last
// component is not followed and a FIFO, socket or device is refused at once instead of blocking a libuv thread
// (four such calls would stall the gateway's whole filesystem).
//
// This module is the file tools' one import: the lexical view check and shared errors are file-tool-basics.ts's,
// the sandboxed operations sandbox-file-operations.ts's (their shell scripts sandbox-file-commands.ts's), the
// host's host-file-operations.ts's. Does not own: the path rules of the host view (path-view.ts), what the
// tools do with the bytes (pi's write and edit, read-tool.ts), or containment (the engines).
export { locateInView, MAX_EDIT_FILE_BYTES, type ViewLocation } from "./file-tool-basics.ts";
export { hostEditOperations, hostWriteOperations } from "./host-file-operations.ts";
export { shellQuote } from "./sandbox-file-commands.ts";
export {
  sandboxEditOperations,
  sandboxReadSource,
  sandboxRemoveFile,
  sandboxWriteOperations,
} from "./sandbox-file-operations.ts";
