import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    // chDB and PGlite bind one data path per process: every test file runs in its own process.
    pool: "forks",
    isolate: true,
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["services/**/*.test.ts", "bench/**/*.test.ts", "portal/app/**/*.test.ts"] }
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000
        }
      },
      {
        extends: true,
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          globalSetup: ["test/support/portalBuild.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000
        }
      }
    ]
  }
})
