import { data } from "react-router"
import { NotFound } from "../root.tsx"

/** Any path no route matches: the 404 page with status 404. */
export function loader() {
  return data(null, { status: 404 })
}

export default function NotFoundRoute() {
  return <NotFound />
}
