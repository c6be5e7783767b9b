/**
 * `npm run dev:portal`: `statusgrid start` (embedded stores under DATA_DIR,
 * default ./data, or the store URLs in the environment) with the portal rebuilt
 * on every change under portal/app, portal/server or portal/public; the server
 * (PORTAL_DEV=true) imports the new build on the next request: reload the page.
 */
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
const build = () => spawnSync("npx", ["react-router", "build", "portal"], { cwd: root, stdio: "inherit" }).status === 0

build()
const server = spawn(process.execPath, [Path.join(root, "bin", "statusgrid.js"), "start", ...process.argv.slice(2)], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, PORTAL_DEV: "true", NODE_ENV: "development" }
})
server.once("exit", (code) => process.exit(code ?? 0))

let timer: NodeJS.Timeout | undefined
for (const dir of ["app", "server", "public"]) {
  Fs.watch(Path.join(root, "portal", dir), { recursive: true }, (_event, file) => {
    if (String(file).includes("+types")) return
    clearTimeout(timer)
    timer = setTimeout(() => console.error(build() ? "[portal] rebuilt; reload the page" : "[portal] build failed"), 150)
  })
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal))
