#!/usr/bin/env node
// The statusgrid CLI. Sources are TypeScript run by Node's own type stripping
// (Node >= 22.22), so there is no build step for the services.
const [major, minor] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 22)) {
  console.error(`statusgrid needs Node.js 22.22 or newer (this is ${process.version}); infra/start installs it.`)
  process.exit(1)
}
// React's server renderer (loaded by the portal's build) picks its development build, several
// times slower, unless NODE_ENV is "production"; `npm run dev:portal` sets "development".
process.env.NODE_ENV ??= "production"
// How far V8 lets the heap grow past what survived its last full collection before the next one
// (README, Configuration: HEAP_GROWING_PERCENT). V8's own choice goes up to 4 times for a heap it
// collects quickly: at 1,000 monitor checks a second, 200 MB live became 660 MB between collections.
// `statusgrid http` polls nothing and keeps V8's choice: its full collections are the crowd ingest's
// slowest moments, and bounding them doubled their number (bench/README.md).
const growing = process.env.HEAP_GROWING_PERCENT ?? (process.argv[2] === "http" ? "0" : "100")
if (!/^\d{1,3}$/.test(growing) || Number(growing) > 300) {
  console.error(`statusgrid: HEAP_GROWING_PERCENT must be a whole number from 0 to 300 (0: V8's own choice); it is "${growing}".`)
  process.exit(1)
}
if (Number(growing) > 0 && !process.execArgv.some((a) => a.startsWith("--heap-growing-percent"))) {
  const v8 = await import("node:v8")
  v8.setFlagsFromString(`--heap-growing-percent=${growing}`)
}
await import("../services/cli/main.ts")
