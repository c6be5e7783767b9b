import { index, route, type RouteConfig } from "@react-router/dev/routes"

/** Every page, listed explicitly (docs: PORTAL.md "Route map"). Add a page: a line here and a file in routes/. */
export default [
  index("routes/home.tsx"),
  route("signup", "routes/signup.tsx"),
  route("signin", "routes/signin.tsx"),
  route("signout", "routes/signout.tsx"),
  route("orgs", "routes/orgs.tsx"),
  route("orgs/new", "routes/orgs-new.tsx"),
  // dashboard: the live dashboard and the stack page
  route("dashboard/:org", "routes/dashboard.tsx"),
  route("dashboard/:org/stacks/:slug", "routes/dashboard/stack.tsx"),
  route("dashboard/:org/stacks/:slug/analytics", "routes/dashboard/analytics.tsx"),
  // end dashboard
  // tv + share: TV mode (a TV link's token, or an organization for its members) and public share pages
  route("tv/:ref", "routes/tv/screen.tsx"),
  route("tv/:ref/state", "routes/tv/state.ts"),
  route("share/:token", "routes/share/page.tsx"),
  route("share/:token/state", "routes/share/state.ts"),
  // end tv + share
  // catalog: browse and search the sources, one source's page with "Add to a stack"
  route("catalog", "routes/catalog/catalog.tsx"),
  route("sources/:key", "routes/catalog/source.tsx"),
  route("sources/:key/analytics", "routes/catalog/analytics.tsx"),
  // alerts + access: the alert page and its links, invitations, OpenID Connect sign-in
  route("alerts/:id", "routes/alerts/alert.tsx"),
  route("alerts/:id/ack", "routes/alerts/ack-link.tsx"),
  route("invite/:token", "routes/access/invite.tsx"),
  route("signin/:provider", "routes/access/oidc-start.tsx"),
  route("signin/:provider/callback", "routes/access/oidc-callback.tsx"),
  // end alerts + access
  // the maintenance calendar's iCal feed (a secret token, no session)
  route("calendar/:file", "routes/calendar/feed.ts"),
  // settings: managing an organization (Portal II); each section's routes between its markers
  route("settings/:org", "routes/settings/layout.tsx", [
    index("routes/settings/index.tsx"),
    route("plan", "routes/settings/plan.tsx"),
    // stacks
    route("stacks", "routes/settings/stacks/list.tsx"),
    route("stacks/:id", "routes/settings/stacks/stack.tsx"),
    route("tv", "routes/settings/tv.tsx"),
    // end stacks
    // monitors + custom sources
    route("monitors", "routes/settings/monitors/list.tsx"),
    route("monitors/:id", "routes/settings/monitors/monitor.tsx"),
    route("monitors/:id/analytics", "routes/settings/monitors/analytics.tsx"),
    route("sources", "routes/settings/sources.tsx"),
    // end monitors + custom sources
    // maintenance calendar
    route("maintenance", "routes/settings/maintenance/calendar.tsx"),
    route("maintenance/:id", "routes/settings/maintenance/window.tsx"),
    // end maintenance calendar
    // channels + notification center
    route("channels", "routes/settings/channels/list.tsx"),
    route("channels/:id", "routes/settings/channels/channel.tsx"),
    route("notifications", "routes/settings/notifications.tsx"),
    route("rules", "routes/settings/rules/list.tsx"),
    route("rules/new", "routes/settings/rules/new.tsx"),
    route("rules/:id", "routes/settings/rules/rule.tsx"),
    // end channels + notification center
    // scheduled reports: schedules, each report, its CSV and PDF
    route("reports", "routes/settings/reports/list.tsx"),
    route("reports/:id", "routes/settings/reports/report.tsx"),
    route("reports/:id/:format", "routes/settings/reports/file.ts"),
    // end scheduled reports
    // team + api keys + audit + profile
    route("team", "routes/settings/team.tsx"),
    route("api-keys", "routes/settings/api-keys.tsx"),
    route("audit", "routes/settings/audit.tsx"),
    route("audit.csv", "routes/settings/audit-csv.ts")
    // end team + api keys + audit + profile
  ]),
  // end settings
  // profile (team + api keys + audit + profile): the signed-in person's own page, outside an organization
  route("profile", "routes/profile.tsx"),
  // end profile
  route("*", "routes/not-found.tsx")
] satisfies RouteConfig
