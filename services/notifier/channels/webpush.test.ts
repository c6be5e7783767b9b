import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import webPush from "web-push"
import { vapidConfig } from "./webpush.ts"

const withEnv = (values: Record<string, string>) => Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(values)))

const failureOf = <A, E>(exit: Exit.Exit<A, E>): string => (Exit.isFailure(exit) ? String(exit.cause) : "succeeded")

describe("VAPID keys", () => {
  it.effect("unset: a pair generated once in DATA_DIR/vapid.json, the same on every later start", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-vapid-"))
      try {
        const first = yield* vapidConfig.pipe(withEnv({ DATA_DIR: dir }))
        const again = yield* vapidConfig.pipe(withEnv({ DATA_DIR: dir }))
        assert.deepStrictEqual(again, first)
        assert.match(first.publicKey, /^B[A-Za-z0-9_-]{86}$/)
        assert.strictEqual(first.subject, "mailto:webpush@statusgrid.invalid", "PUBLIC_URL is not https")
        assert.strictEqual(Fs.statSync(Path.join(dir, "vapid.json")).mode & 0o777, 0o600)
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }))

  it.effect("set: the operator's keys and subject; both keys or neither; a malformed key or subject refused at start", () =>
    Effect.gen(function*() {
      const keys = webPush.generateVAPIDKeys()
      const env = { VAPID_PUBLIC_KEY: keys.publicKey, VAPID_PRIVATE_KEY: keys.privateKey, DATA_DIR: "/nonexistent/never-written" }
      assert.deepStrictEqual(
        yield* vapidConfig.pipe(withEnv({ ...env, VAPID_SUBJECT: "mailto:ops@example.com" })),
        { ...keys, subject: "mailto:ops@example.com" }
      )
      assert.strictEqual((yield* vapidConfig.pipe(withEnv({ ...env, PUBLIC_URL: "https://status.example.com" }))).subject, "https://status.example.com")
      assert.match(failureOf(yield* Effect.exit(vapidConfig.pipe(withEnv({ VAPID_PUBLIC_KEY: keys.publicKey })))), /set together, or neither/)
      assert.match(failureOf(yield* Effect.exit(vapidConfig.pipe(withEnv({ ...env, VAPID_PRIVATE_KEY: "short" })))), /invalid VAPID settings/)
      assert.match(failureOf(yield* Effect.exit(vapidConfig.pipe(withEnv({ ...env, VAPID_SUBJECT: "ops@example.com" })))), /invalid VAPID settings/)
    }))
})
