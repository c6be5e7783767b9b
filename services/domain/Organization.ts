import { Schema } from "effect"

/** Roles of a member or an API key. */
export const Role = Schema.Literals(["admin", "member", "viewer"])
export type Role = typeof Role.Type

export const PlanId = Schema.Literals(["free", "pro", "enterprise"])
export type PlanId = typeof PlanId.Type
