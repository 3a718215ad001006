// Tool names as the policy sees them. Owns: normalising a name (trim,
// lower-case, aliases such as bash → exec), normalising lists (blank entries
// dropped) and expanding `group:*` entries. Does not own: glob matching
// (policy.ts) or which groups exist (catalog.ts).
import { DEFAULT_TOOL_CATALOG, type ToolCatalog } from "./catalog.ts";

/** `"  Bash "` → `"exec"`; `"Apply-Patch"` → `"apply_patch"`; blank → `""`. */
export function normalizeToolName(name: string, catalog: ToolCatalog = DEFAULT_TOOL_CATALOG): string {
  const folded = name.trim().toLowerCase();
  return catalog.aliases[folded] ?? folded;
}

/** Normalises every entry and drops the blank ones. */
export function normalizeToolList(
  list: readonly string[] | undefined,
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
): string[] {
  if (!list) return [];
  return list.map((entry) => normalizeToolName(entry, catalog)).filter((entry) => entry !== "");
}

/** The members of a group entry (`group:fs`), or undefined when the entry is not a known group. */
export function groupMembers(
  entry: string,
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
): readonly string[] | undefined {
  return Object.hasOwn(catalog.groups, entry) ? catalog.groups[entry] : undefined;
}

/** Normalises a list and replaces each known group by its members; first occurrence wins, no duplicates. */
export function expandToolGroups(
  list: readonly string[] | undefined,
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
): string[] {
  const expanded = new Set<string>();
  for (const entry of normalizeToolList(list, catalog)) {
    const members = groupMembers(entry, catalog);
    if (members) for (const member of members) expanded.add(member);
    else expanded.add(entry);
  }
  return [...expanded];
}
