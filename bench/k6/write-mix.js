// k6 run -e BASE_URL=http://localhost:8080 -e API_KEY=sg_... bench/k6/write-mix.js
// The write mix of `statusgrid bench api`: an Admin key of a Pro organization creating maintenance
// windows and listing them. Create the organization and key with `statusgrid org create --plan pro`.
import http from "k6/http"
import { check } from "k6"

const base = __ENV.BASE_URL || "http://localhost:8080"
const headers = { authorization: `Bearer ${__ENV.API_KEY}`, "content-type": "application/json" }

export const options = {
  scenarios: { write: { executor: "constant-vus", vus: 16, duration: "30s" } },
  thresholds: { http_req_failed: ["rate<0.001"] }
}

export default function () {
  const created = http.post(`${base}/api/v1/maintenance-windows`, JSON.stringify({
    title: "k6 maintenance",
    description: "written by bench/k6/write-mix.js",
    starts_at: "2030-01-01T00:00:00Z",
    ends_at: "2030-01-01T02:00:00Z"
  }), { headers })
  check(created, { "created 201": (r) => r.status === 201 })
  const listed = http.get(`${base}/api/v1/maintenance-windows?limit=10`, { headers })
  check(listed, { "listed 200": (r) => r.status === 200 })
}
