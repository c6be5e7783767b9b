import { index, route, type RouteConfig } from "@react-router/dev/routes"

/** Every page, listed explicitly (docs: PORTAL.md "Route map"). Add a page: a line here and a file in routes/. */
export default [
  index("routes/home.tsx"),
  route("signup", "routes/signup.tsx"),
  route("signin", "routes/signin.tsx"),
  route("signout", "routes/signout.tsx"),
  route("orgs", "routes/orgs.tsx"),
  route("orgs/new", "routes/orgs-new.tsx"),
  route("dashboard/:org", "routes/dashboard.tsx"),
  // alerts + access: the alert page and its links, invitations, OpenID Connect sign-in
  route("alerts/:id", "routes/alerts/alert.tsx"),
  route("alerts/:id/ack", "routes/alerts/ack-link.tsx"),
  route("invite/:token", "routes/access/invite.tsx"),
  route("signin/:provider", "routes/access/oidc-start.tsx"),
  route("signin/:provider/callback", "routes/access/oidc-callback.tsx"),
  // end alerts + access
  route("*", "routes/not-found.tsx")
] satisfies RouteConfig
