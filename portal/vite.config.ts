import { reactRouter } from "@react-router/dev/vite"
import { defineConfig } from "vite"

/**
 * The server build's entry is server/handler.ts (it exports `handle`, which the
 * Effect server mounts). `#services/*` stays an import of the running process's
 * modules, never a second bundled copy (decision 0011).
 */
export default defineConfig({
  plugins: [reactRouter()],
  environments: {
    ssr: {
      build: {
        rolldownOptions: {
          input: "./server/handler.ts",
          external: [/^#services\//]
        }
      }
    }
  }
})
