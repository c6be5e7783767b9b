// k6 run -e BASE_URL=http://localhost:8080 bench/k6/read-mix.js
// The read mix of `statusgrid bench api` (bench/api.ts readMix): list, category, search, filter,
// one source, one source's components, spread over the catalog: list pages and categories from anywhere
// (cursors), searches for the start of a name, filters of five keys; nearly every URL distinct.
import http from "k6/http"
import { check } from "k6"
import encoding from "k6/encoding"

const base = __ENV.BASE_URL || "http://localhost:8080"

export const options = {
  scenarios: { read: { executor: "constant-vus", vus: 64, duration: "30s" } },
  thresholds: { http_req_duration: ["p(99)<25"], http_req_failed: ["rate<0.001"] }
}

export function setup() {
  const sources = []
  let cursor = null
  do {
    const page = http.get(`${base}/api/v1/sources?limit=500${cursor ? `&cursor=${cursor}` : ""}`).json()
    sources.push(...page.data.map((s) => ({ key: s.key, name: s.name })))
    cursor = page.next_cursor
  } while (cursor)
  return { sources }
}

const categories = ["cloud", "payment", "communication", "devtools", "monitoring", "cdn_dns"]

// base64url of a key: the cursor of the page after it (services/api/Sources.ts)
const cursorAfter = (key) => encoding.b64encode(key, "rawurl")

export default function (data) {
  const anySource = () => data.sources[Math.floor(Math.random() * data.sources.length)]
  const anyKey = () => anySource().key
  const i = Math.floor(Math.random() * 6000)
  const source = anySource()
  const key = source.key
  const paths = [
    `/api/v1/sources?limit=${[20, 50, 100][i % 3]}&cursor=${cursorAfter(anyKey())}`,
    `/api/v1/sources?category=${categories[i % categories.length]}&cursor=${cursorAfter(anyKey())}`,
    `/api/v1/sources?search=${encodeURIComponent(source.name.slice(0, 3 + (i % 4)))}`,
    `/api/v1/sources?filter=${[0, 1, 2, 3, 4].map(anyKey).join(",")}`,
    `/api/v1/sources/${key}`,
    `/api/v1/sources/${key}/components`
  ]
  const res = http.get(`${base}${paths[i % paths.length]}`)
  check(res, { "status 200": (r) => r.status === 200 })
}
