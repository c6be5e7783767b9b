import { Schema } from "effect"

/** Roles of a member or an API key. */
export const Role = Schema.Literals(["admin", "member", "viewer"])
export type Role = typeof Role.Type

export const PlanId = Schema.Literals(["free", "pro", "enterprise"])
export type PlanId = typeof PlanId.Type

/** How many origins may frame an organization's TV links and share pages. */
export const maxFrameAncestors = 10

const frameAncestorPattern =
  /^(?:https:\/\/[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|http:\/\/(?:localhost|127\.0\.0\.1))(?::\d{1,5})?$/

/**
 * Whether `origin` may be listed in `frame_ancestors`: an https origin (`https://intranet.example.com`,
 * `https://wall.example.com:8443`), or http on this machine (`http://localhost:3000`), written as the
 * browser writes origins (lower case, no path, no trailing slash, no default port). Nothing else
 * reaches a Content-Security-Policy header: no wildcard, no space, no `;`, no quote.
 */
export const isFrameAncestor = (origin: string): boolean => {
  if (!frameAncestorPattern.test(origin)) return false
  try {
    return new URL(origin).origin === origin
  } catch {
    return false
  }
}

export const FrameAncestor = Schema.String.check(Schema.makeFilter((s: string) =>
  isFrameAncestor(s) ||
  "must be an origin such as https://intranet.example.com or http://localhost:3000: https (http only on localhost), lower case, no path, no default port"
))

/**
 * The origins allowed to frame an organization's TV links and public share pages (their CSP
 * `frame-ancestors`), at most `maxFrameAncestors`; empty, the default: framed nowhere. Every other
 * page is never framed (services/api/SecurityHeaders.ts).
 */
export const FrameAncestors = Schema.Array(FrameAncestor).check(
  Schema.isMaxLength(maxFrameAncestors, { message: `must list at most ${maxFrameAncestors} origins` }),
  Schema.isUnique({ message: "must not list an origin twice" })
)
export type FrameAncestors = typeof FrameAncestors.Type
