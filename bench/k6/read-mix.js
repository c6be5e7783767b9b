// k6 run -e BASE_URL=http://localhost:8080 bench/k6/read-mix.js
// The read mix of `statusgrid bench api` (bench/api.ts readMix): list, category, search, filter,
// one source, one source's components, spread over the catalog.
import http from "k6/http"
import { check } from "k6"

const base = __ENV.BASE_URL || "http://localhost:8080"

export const options = {
  scenarios: { read: { executor: "constant-vus", vus: 64, duration: "30s" } },
  thresholds: { http_req_duration: ["p(99)<25"], http_req_failed: ["rate<0.001"] }
}

export function setup() {
  const keys = []
  let cursor = null
  do {
    const page = http.get(`${base}/api/v1/sources?limit=500${cursor ? `&cursor=${cursor}` : ""}`).json()
    keys.push(...page.data.map((s) => s.key))
    cursor = page.next_cursor
  } while (cursor)
  return { keys }
}

const categories = ["cloud", "payment", "communication", "devtools", "monitoring", "cdn_dns"]
const words = ["status", "cloud", "api", "mail", "pay", "cdn", "git", "sim"]

export default function (data) {
  const i = Math.floor(Math.random() * 600)
  const key = data.keys[(i * 7919) % data.keys.length]
  const paths = [
    "/api/v1/sources?limit=50",
    `/api/v1/sources?category=${categories[i % categories.length]}`,
    `/api/v1/sources?search=${words[i % words.length]}`,
    `/api/v1/sources?filter=${[0, 1, 2, 3, 4].map((j) => data.keys[(i * 31 + j * 997) % data.keys.length]).join(",")}`,
    `/api/v1/sources/${key}`,
    `/api/v1/sources/${key}/components`
  ]
  const res = http.get(`${base}${paths[i % paths.length]}`)
  check(res, { "status 200": (r) => r.status === 200 })
}
