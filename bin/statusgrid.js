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
// The young generation's size (README, Configuration: HEAP_SEMI_SPACE_MB; decision 0027). V8 reads it
// only when the heap is made, so the process replaces itself (`process.execve`: the same pid, the same
// arguments) with the flag added. `statusgrid runner` at 40,000 sources: half the collection time, the
// checks in flight dying young instead of being promoted. The other commands keep V8's own unless this
// is set: `statusgrid start` for the embedded default's memory (60,000 website monitors under 1 GB),
// `statusgrid http` because neither the crowd ingest nor the API mix measured faster with it.
const semiDefault = process.argv[2] === "runner" ? "64" : "0"
const semi = process.env.HEAP_SEMI_SPACE_MB ?? semiDefault
if (!/^\d{1,4}$/.test(semi) || Number(semi) > 1024) {
  console.error(`statusgrid: HEAP_SEMI_SPACE_MB must be a whole number from 0 to 1024 (0: V8's own choice); it is "${semi}".`)
  process.exit(1)
}
const semiSet = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((a) => a.startsWith("--max-semi-space-size"))
if (Number(semi) > 0 && !semiSet && typeof process.execve === "function") {
  process.execve(process.execPath, [process.execPath, `--max-semi-space-size=${semi}`, ...process.execArgv, ...process.argv.slice(1)], process.env)
}
await import("../services/cli/main.ts")
