// The public surface of @agent-kernel/layer-check. Owns nothing itself: it
// names what other tooling may use. The command line lives in cli.ts.
export { findImports, type ImportKind, type ImportSite } from "./import-scanner.ts";
export {
  checkWorkspace,
  discoverWorkspacePackages,
  type LayerCheckResult,
  PACKAGE_GROUPS,
  type PackageGroup,
  packageNameOf,
  runLayerCheck,
  type Violation,
  type ViolationRule,
  type WorkspacePackage,
} from "./layer-check.ts";
export {
  APP_LAYER,
  appLayerEntryFor,
  type LayerEntry,
  layerEntryFor,
  matchesPattern,
  mayDependOn,
  PACKAGE_LAYERS,
  RESTRICTED_THIRD_PARTY,
  type RestrictedThirdParty,
  restrictionFor,
  shortName,
  TOOLING_ALLOWED_IN_TESTS,
  UMBRELLA_APP_NAME,
  UMBRELLA_COMPOSES,
  UMBRELLA_LAYER,
  WORKSPACE_SCOPE,
} from "./layers.ts";
