import type { Config } from "@react-router/dev/config"

/** Server-rendered portal; the build goes to portal/build (client/ and server/index.js), served by services/api/Portal.ts. */
export default {
  appDirectory: "app",
  buildDirectory: "build",
  ssr: true
} satisfies Config
