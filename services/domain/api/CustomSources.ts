import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { SourceStatus } from "../Status.ts"
import { noNul } from "../Text.ts"
import { OrgAuth } from "./Auth.ts"
import { Forbidden, NotFound, PlanLimitReached, Unprocessable } from "./Errors.ts"
import { Page, PageQuery } from "./Paging.ts"
import { Source } from "./Sources.ts"
import { NullOr } from "../NullOr.ts"

const UtcTimestamp = Schema.String.annotate({ format: "date-time" }).pipe(
  Schema.decodeTo(Schema.DateTimeUtc, SchemaTransformation.dateTimeUtcFromString)
)

/** How a custom source gets its status: read from a status page (`url`) or set by the organization's users (`manual`). */
export const CustomSourceKind = Schema.Literals(["url", "manual"])
export type CustomSourceKind = typeof CustomSourceKind.Type

/** A custom source: a source as `/sources` shows one, private to the organization, with how it gets its status. */
export const CustomSource = Schema.Struct({
  ...Source.fields,
  kind: CustomSourceKind,
  last_changed_at: NullOr(UtcTimestamp).annotate({ description: "When the status last changed; null until it has." })
}).annotate({ identifier: "CustomSource" })
export type CustomSource = typeof CustomSource.Type


export const maxDescriptionLength = 2000

const Name = Schema.Trim.check(Schema.isBetweenLength(1, 200, { message: "must be 1 to 200 characters" }), noNul)
const Description = Schema.String.check(
  Schema.isMaxLength(maxDescriptionLength, { message: `must be at most ${maxDescriptionLength} characters` }),
  noNul
)

/** An absolute http(s) URL without credentials, as status pages are. */
export const StatusPageUrl = Schema.Trim.check(
  Schema.isBetweenLength(1, 2048, { message: "must be 1 to 2048 characters" }),
  Schema.makeFilter((s: string) => {
    let url: URL
    try {
      url = new URL(s)
    } catch {
      return "is not a valid absolute URL (e.g. https://status.example.com)"
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must use http or https"
    if (url.username !== "" || url.password !== "") return "must not contain credentials (user:password@)"
    return url.hostname !== "" || "has no host"
  })
).annotate({ format: "uri" })

/**
 * `POST /custom-sources`. URL mode: `{ name, status_page_url, status_page_type? }`,
 * the provider detected when no type is given. Manual mode:
 * `{ name, type: "manual", status? }` (status operational unless given).
 */
export const CustomSourceCreate = Schema.Struct({
  name: Name,
  description: Schema.optionalKey(Description),
  type: Schema.optionalKey(CustomSourceKind.annotate({ description: "`manual`: the status is set by users; `url` (default): read from status_page_url." })),
  status_page_url: Schema.optionalKey(StatusPageUrl.annotate({ description: "URL mode: the public status page." })),
  status_page_type: Schema.optionalKey(Schema.String.annotate({
    description: "URL mode: the provider (statuspage_io, betterstack, instatus, aws, gcp, azure, github, cachet_v2, ...); detected when absent."
  })),
  status: Schema.optionalKey(SourceStatus.annotate({ description: "Manual mode: the current status." }))
}).annotate({ identifier: "CustomSourceCreate" })
export type CustomSourceCreate = typeof CustomSourceCreate.Type

/** `PATCH /custom-sources/{key}`: absent fields keep their values; `status` only for manual sources. */
export const CustomSourcePatch = Schema.Struct({
  name: Schema.optionalKey(Name),
  description: Schema.optionalKey(Description),
  status: Schema.optionalKey(SourceStatus.annotate({ description: "Manual sources only: the status users set." }))
}).annotate({ identifier: "CustomSourcePatch" })
export type CustomSourcePatch = typeof CustomSourcePatch.Type

const KeyParams = { key: Schema.String.annotate({ description: "The custom source's key." }) }

/** An organization's private sources: a status page URL (provider detected) or a status set by hand. */
export class CustomSourcesGroup extends HttpApiGroup.make("customSources")
  .add(
    HttpApiEndpoint.get("list", "/custom-sources", { query: PageQuery, success: Page(CustomSource, "CustomSourceList"), error: Forbidden })
      .annotateMerge(OpenApi.annotations({ summary: "List the organization's custom sources, oldest first" })),
    HttpApiEndpoint.post("create", "/custom-sources", {
      payload: CustomSourceCreate,
      success: CustomSource.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, PlanLimitReached, Unprocessable]
    }).annotateMerge(OpenApi.annotations({
      summary: "Add a custom source (Admin, Member)",
      description: "Without `status_page_type` the provider is detected from the page; a page whose provider cannot be " +
        "detected answers 422 naming `status_page_url`. The key is derived from the organization and the name. " +
        "At most 10 per organization by default (402 `max_custom_sources`)."
    })),
    HttpApiEndpoint.get("get", "/custom-sources/:key", { params: KeyParams, success: CustomSource, error: [Forbidden, NotFound] })
      .annotateMerge(OpenApi.annotations({ summary: "Get one custom source" })),
    HttpApiEndpoint.patch("update", "/custom-sources/:key", {
      params: KeyParams,
      payload: CustomSourcePatch,
      success: CustomSource,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({
      summary: "Rename, describe, or (manual sources) set the status of a custom source (Admin, Member)"
    })),
    HttpApiEndpoint.delete("delete", "/custom-sources/:key", {
      params: KeyParams,
      success: HttpApiSchema.NoContent,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Delete a custom source (Admin); it leaves the stacks that showed it" }))
  )
  .middleware(OrgAuth)
  .annotateMerge(OpenApi.annotations({
    title: "CustomSources",
    description: "An organization's private sources: a status page URL (provider detected) or a status set by hand."
  }))
{}
