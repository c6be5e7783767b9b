import { describe, expect, it } from "vitest"
import { routeOf } from "./RequestMetrics.ts"

describe("routeOf: a request's route label", () => {
  it("is the OpenAPI path template of the endpoint, whatever the ids and the query", () => {
    expect(routeOf("/api/v1/sources?limit=2")).toBe("/api/v1/sources")
    expect(routeOf("/api/v1/sources/aws/reports")).toBe("/api/v1/sources/:key/reports")
    expect(routeOf("/api/v1/reports/0b7c/pdf")).toBe("/api/v1/reports/:id/pdf")
    expect(routeOf("/api/v1/report-schedules/x")).toBe("/api/v1/report-schedules/:id")
  })

  it("prefers a literal segment over a parameter", () => {
    expect(routeOf("/api/v1/openapi.json")).toBe("/api/v1/openapi.json")
  })

  it("names the router's own routes, files and pages without their paths", () => {
    expect(routeOf("/healthz")).toBe("/healthz")
    expect(routeOf("/metrics")).toBe("/metrics")
    expect(routeOf("/api/v1/organizations/acme/stream?stack=x")).toBe("/api/v1/organizations/:org/stream")
    expect(routeOf("/a/Zx81")).toBe("/a/:code")
    expect(routeOf("/assets/entry-abc.js")).toBe("asset")
    expect(routeOf("/dashboard/acme")).toBe("page")
    expect(routeOf("/")).toBe("page")
  })

  it("folds every unknown API path into one label", () => {
    expect(routeOf("/api/v1/no-such-thing")).toBe("/api/unknown")
    expect(routeOf("/api/v1/sources/a/b/c/d")).toBe("/api/unknown")
    expect(routeOf("/api/v1/sources//reports")).toBe("/api/unknown")
  })
})
