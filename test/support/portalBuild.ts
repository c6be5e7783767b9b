import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..", "..")
const built = Path.join(root, "portal", "build", "server", "index.js")

/** The newest modification time under `dir` (generated +types excluded). */
const newest = (dir: string): number =>
  Fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !e.parentPath.includes("+types"))
    .reduce((max, e) => Math.max(max, Fs.statSync(Path.join(e.parentPath, e.name)).mtimeMs), 0)

/** vitest globalSetup of the browser tests: builds the portal when the build is missing or older than a source (as infra/start). */
export default function setup() {
  const at = Fs.statSync(built, { throwIfNoEntry: false })?.mtimeMs
  const sources = Math.max(
    ...["app", "server", "public"].map((d) => newest(Path.join(root, "portal", d))),
    ...["vite.config.ts", "react-router.config.ts"].map((f) => Fs.statSync(Path.join(root, "portal", f)).mtimeMs)
  )
  if (at !== undefined && at >= sources) return
  const result = spawnSync("npx", ["react-router", "build", "portal"], { cwd: root, stdio: "inherit" })
  if (result.status !== 0) throw new Error("the portal build failed (npx react-router build portal)")
}
