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
await import("../services/cli/main.ts")
