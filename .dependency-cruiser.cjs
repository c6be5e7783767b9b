/**
 * The layer order of services/ (decision 0010, README "Architecture"), enforced by `npm run lint`:
 *
 *   domain → platform → adapters, monitors → catalog → simulator
 *          → poller, notifier, orgs, history, crowd → identity → reports → api → demo → cli
 *
 * A folder imports only from folders to its left and from itself; folders on one
 * level (adapters/monitors; poller/notifier/orgs/history/crowd) do not import each other.
 * Test files next to the code (`*.test.ts`), bench/ and test/ may import anything.
 * portal/ (React Router) may import services levels up to api, never demo or cli (decision 0011).
 * Type-only imports count. A new folder under services/ must be given a level here.
 */
const levels = [
  ["domain"],
  ["platform"],
  ["adapters", "monitors"],
  ["catalog"],
  ["simulator"],
  ["poller", "notifier", "orgs", "history", "crowd"],
  ["identity"],
  ["reports"],
  ["api"],
  ["demo"],
  ["cli"]
]

const any = (folders) => `^services/(${folders.join("|")})/`
const notTests = "\\.test\\.ts$"

const aboveRules = levels.slice(0, -1).map((level, i) => ({
  name: `${level.join("-")}-imports-nothing-above`,
  severity: "error",
  comment: `${level.join(", ")} may import only ${i === 0 ? "itself" : levels.slice(0, i).flat().join(", ")} (layer order in .dependency-cruiser.cjs)`,
  from: { path: any(level), pathNot: notTests },
  to: { path: any(levels.slice(i + 1).flat()) }
}))

const peerRules = levels.filter((level) => level.length > 1).map((level) => ({
  name: `peers-${level.join("-")}`,
  severity: "error",
  comment: `${level.join(", ")} are on one level and do not import each other: move the shared piece to a lower level`,
  from: { path: any(level), pathNot: notTests },
  to: { path: any(level), pathNot: "^services/$1/" }
}))

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...aboveRules,
    ...peerRules,
    {
      name: "every-services-folder-has-a-layer",
      severity: "error",
      comment: "a folder under services/ that is not in the layer order of .dependency-cruiser.cjs: give it a level",
      from: { path: "^services/", pathNot: [any(levels.flat()), "^services/[^/]+$"] },
      to: { path: "^services/" }
    },
    {
      name: "portal-imports-up-to-api",
      severity: "error",
      comment: "portal/ may import services/ only up to the api level (decision 0011): not demo or cli",
      from: { path: "^portal/" },
      to: { path: any(levels.slice(levels.findIndex((l) => l.includes("api")) + 1).flat()) }
    },
    {
      name: "no-circular",
      severity: "error",
      comment: "modules that import each other in a circle (through any number of steps)",
      from: { path: "^services/", pathNot: notTests },
      to: { circular: true }
    }
  ],
  options: {
    includeOnly: "^(services|portal)/",
    exclude: { path: "^portal/(build|\\.react-router)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] }
  }
}
