import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    // chDB and PGlite bind one data path per process: every test file runs in its own process.
    pool: "forks",
    isolate: true,
    // Two files at a time. Vitest's default is one fewer than the cores, one on the 2-core machine the
    // suite runs on, where a file mostly waits on its servers, processes and browser: one file at a time
    // left the machine 67-70 % idle (/proc/stat over the integration files). Each file's process has its own
    // Redis database (test/support/stores.ts) and each suite its own PostgreSQL database.
    maxWorkers: 2,
    // scrypt at OWASP's cost (N = 2^17) takes ~0.35 s and 128 MiB per hash: users the tests sign up and in
    // (and the servers they start, which inherit the environment) hash at N = 2^12 instead.
    // services/identity/Passwords.test.ts checks the default itself.
    // Every test talks to its servers from 127.0.0.1: the limits per address and per account
    // (services/api/AddressLimits.ts, services/identity/SignInThrottle.ts) are raised for them;
    // test/integration/address-limits.test.ts sets its own.
    env: { PASSWORD_SCRYPT_COST: "12", ADDRESS_SIGNIN_PER_MINUTE: "100000", ADDRESS_PUBLIC_PER_MINUTE: "1000000", SIGNIN_ATTEMPTS_PER_ACCOUNT: "100000" },
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
