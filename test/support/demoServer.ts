import { Context, Effect, Layer, ManagedRuntime } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { childEnv, freePort, type Running, startService } from "./process.ts"
import { freshDatabase } from "./stores.ts"

class DemoDatabase extends Context.Service<DemoDatabase, string>()("test/support/DemoDatabase") {}

/** `statusgrid start --demo` over a fresh PostgreSQL database, with its simulator as a child. */
export interface DemoServer {
  readonly server: Running
  /** The demo's simulator (its control API under `/_control`). */
  readonly simulatorUrl: string
  /** The fresh database, for the test's own services or CLI calls. */
  readonly databaseUrl: string
  readonly dataDir: string
  readonly stop: () => Promise<void>
}

/**
 * A real `statusgrid start --demo` on a fresh database: `sources` synthetic
 * sources, the demo world ticking once an hour (what changes is the test's
 * doing), `PUBLIC_URL` its own address (links in messages open it), and
 * `env` added to its environment.
 */
export const startDemoServer = async (options: { readonly sources: number; readonly env?: Record<string, string> }): Promise<DemoServer> => {
  const database = ManagedRuntime.make(Layer.effect(DemoDatabase, freshDatabase))
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-demo-"))
  const cleanUp = async () => {
    await database.dispose()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const databaseUrl = await database.runPromise(Effect.gen(function*() {
      return yield* DemoDatabase
    }))
    const port = await freePort()
    const server = await startService(childEnv({
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      SIMULATOR_URL: "http://127.0.0.1:0",
      DEMO_SOURCES: String(options.sources),
      DEMO_TICK_MS: "3600000",
      ...options.env
    }), 120_000, ["start", "--demo"])
    const line = server.logs.find((l) => l["message"] === "demo mode: the simulator runs beside the service")
    const simulatorUrl = (line?.["annotations"] as Record<string, string> | undefined)?.["simulator"] ?? ""
    if (simulatorUrl === "") {
      await server.stop()
      throw new Error("the demo did not log its simulator URL")
    }
    return {
      server,
      simulatorUrl,
      databaseUrl,
      dataDir,
      stop: async () => {
        await server.stop()
        await cleanUp()
      }
    }
  } catch (error) {
    await cleanUp()
    throw error
  }
}
