import { Schema } from "effect"
import { SourceStatus } from "./Status.ts"
import { slugOf } from "./Text.ts"

/** Check classes and their poll intervals. */
export const CheckClass = Schema.Literals(["critical", "high", "standard", "low"])
export type CheckClass = typeof CheckClass.Type

export const checkClassIntervalSeconds: Record<CheckClass, number> = {
  critical: 30,
  high: 60,
  standard: 300,
  low: 900
}

/** The six categories; the id is the API's `category` value. */
export const CategoryId = Schema.Literals(["cloud", "payment", "communication", "devtools", "monitoring", "cdn_dns"])
export type CategoryId = typeof CategoryId.Type

/** Where each category comes in a list: its `position` in the `categories` table (migrations/postgres/0002_sources.sql). */
const categoryRank: ReadonlyMap<CategoryId, number> = new Map(CategoryId.literals.map((c, i) => [c, i]))

/** A source's categories in the catalog's order (`CategoryId`'s, which is the table's `position`). */
export const inCategoryOrder = (ids: ReadonlyArray<CategoryId>): ReadonlyArray<CategoryId> =>
  ids.toSorted((a, b) => categoryRank.get(a)! - categoryRank.get(b)!)

/** Each category's name, as in the `categories` table (migrations/postgres/0002_sources.sql). */
export const categoryNames: { readonly [C in CategoryId]: string } = {
  cloud: "Cloud infrastructure",
  payment: "Payment processing",
  communication: "Communication",
  devtools: "Development tools",
  monitoring: "Monitoring and analytics",
  cdn_dns: "CDN and DNS"
}

/** A source key: lower-case letters, digits and inner hyphens, at most 128 characters. */
export const SourceKey = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[a-z0-9](?:[a-z0-9-]{0,126}[a-z0-9])?$/, {
    message: "a source key is 1-128 lower-case letters, digits or inner hyphens"
  })),
  Schema.brand("SourceKey")
)
export type SourceKey = typeof SourceKey.Type

/** Turns a display name into a key candidate: "Circle CI" -> "circle-ci". */
export const keyFromName = (name: string): string => slugOf(name, 128, "source")

export { SourceStatus }
