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
  // end dashboard
  route("*", "routes/not-found.tsx")
] satisfies RouteConfig
