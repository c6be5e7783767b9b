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
  // catalog: browse and search the sources, one source's page with "Add to a stack"
  route("catalog", "routes/catalog/catalog.tsx"),
  route("sources/:key", "routes/catalog/source.tsx"),
  route("*", "routes/not-found.tsx")
] satisfies RouteConfig
