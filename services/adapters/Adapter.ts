import { Schema } from "effect"
import type { Effect } from "effect"
import type { Snapshot } from "../domain/Snapshot.ts"

/** One item of an RSS 2.0 or Atom feed (feed.ts parses them). */
export interface FeedItem {
  /** guid (RSS) or id (Atom); the link when neither is present. */
  readonly id: string
  readonly title: string
  readonly link: string
  /** Plain text of description / summary / content, tags removed. */
  readonly summary: string
  /** ISO 8601 UTC, or null when absent or unparseable. */
  readonly published: string | null
  readonly updated: string | null
  readonly categories: ReadonlyArray<string>
}

/** A parsed RSS 2.0 or Atom feed. */
export interface Feed {
  readonly format: "rss" | "atom"
  readonly title: string
  readonly link: string
  readonly items: ReadonlyArray<FeedItem>
}

/** One fetched document, as the poller or the prober received it. */
export interface Fetched {
  readonly url: string
  readonly status: number
  /** The Content-Type header, "" when absent. */
  readonly contentType: string
  readonly body: Uint8Array
}

/** What an adapter knows of the source it reads. */
export interface SourceConfig {
  /** The URL the source was added with: a status page, a feed, or an endpoint. */
  readonly url: string
  /** Regions the source is about (provider's region ids, e.g. us-east-1); empty or absent = all. */
  readonly regions?: ReadonlyArray<string>
  /** Provider-specific options, e.g. `keywords` for social feeds or `expect` for health checks. */
  readonly options?: Readonly<Record<string, string>>
}

export const AdapterErrorReason = Schema.Literals([
  /** The upstream answered with a status other than 2xx. */
  "http_status",
  /** A JSON document was expected and the body is not JSON (or is truncated). */
  "not_json",
  /** The upstream answered an API path with an HTML page (SPA catch-all). */
  "html_catch_all",
  /** The body parsed but its shape is not the provider's format. */
  "invalid_shape",
  /** An XML/feed body could not be parsed. */
  "invalid_feed"
])
export type AdapterErrorReason = typeof AdapterErrorReason.Type

export class AdapterError extends Schema.TaggedError<AdapterError>()("AdapterError", {
  provider: Schema.String,
  url: Schema.String,
  reason: AdapterErrorReason,
  message: Schema.String
}) {}

/**
 * A reader of one provider's format. Adapters do no I/O: the caller fetches
 * `endpoints(source)` (in that order) and hands the documents to `parse`, so
 * the poller owns conditional requests, retries and timeouts, and tests feed
 * fixtures directly.
 */
export interface Adapter {
  /** Wire value of the provider type, e.g. "statuspage_io". */
  readonly id: string
  /** Display name, e.g. "Atlassian Statuspage". */
  readonly name: string
  /** Absolute URLs to fetch for one poll of `source`. The first is the primary document. */
  readonly endpoints: (source: SourceConfig) => ReadonlyArray<string>
  /**
   * The documents fetched from `endpoints(source)`, same order, into one snapshot.
   * A secondary document that failed (non-2xx) may be skipped; a primary that failed is an error.
   */
  readonly parse: (
    fetched: ReadonlyArray<Fetched>,
    source: SourceConfig,
    now: Date
  ) => Effect.Effect<Snapshot, AdapterError>
  /** How auto-detection recognises this provider (services/adapters/detect.ts). */
  readonly detect: Detection
}

export interface Detection {
  /** Step 1: the URL's parsed hostname is one of the provider's own hosts. */
  readonly host?: (url: URL) => boolean
  /** Step 2: a JSON document at `path` (relative to the page URL) with this shape. */
  readonly probe?: {
    readonly path: string
    readonly accepts: (json: unknown) => boolean
  }
  /** Step 3: the page's HTML carries the provider's markers. */
  readonly html?: (html: string) => boolean
  /** Step 4: a feed found by autodiscovery is this provider's (e.g. by its channel link). */
  readonly feed?: (feed: Feed) => boolean
}
