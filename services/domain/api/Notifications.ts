import { HttpApiGroup, OpenApi } from "effect/http-api"
import { OrgAuth } from "./Auth.ts"

/** Notification channels and rules, test sends and the notification center. */
export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({ title: "Notifications", description: "Notification channels and rules, test sends and the notification center." }))
{}
