import { Effect } from "effect"
import { XMLParser } from "fast-xml-parser"
import { AdapterError, type Feed, type Fetched } from "./Adapter.ts"
import { isoOrNull } from "./normalize.ts"
import { htmlText, text } from "./text.ts"

// The parsed feed is part of the adapter contract (Adapter.detect.feed), so its types live in Adapter.ts.
export type { Feed, FeedItem } from "./Adapter.ts"

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  textNodeName: "#text",
  processEntities: true,
  htmlEntities: true,
  // Text stays text: "1.10", "007" or "1e5" in a title, guid or category are not numbers.
  parseTagValue: false,
  isArray: (name) => name === "item" || name === "entry" || name === "category" || name === "link"
})

type Node = Record<string, unknown>

const textOf = (value: unknown): string => {
  if (value === undefined || value === null) return ""
  if (typeof value === "string" || typeof value === "number") return String(value)
  if (Array.isArray(value)) return value.length > 0 ? textOf(value[0]) : ""
  if (typeof value === "object") return textOf((value as Node)["#text"])
  return ""
}

const atomLink = (links: unknown): string => {
  const list = Array.isArray(links) ? (links as Array<unknown>) : []
  const pick = list.find((l) => typeof l === "object" && l !== null && ((l as Node)["@rel"] ?? "alternate") === "alternate") ??
    list[0]
  if (typeof pick === "string") return pick
  if (typeof pick === "object" && pick !== null) return String((pick as Node)["@href"] ?? "")
  return ""
}

const categoriesOf = (value: unknown): Array<string> =>
  (Array.isArray(value) ? value : []).map((c) =>
    typeof c === "object" && c !== null ? String((c as Node)["@term"] ?? (c as Node)["#text"] ?? "") : String(c)
  ).filter((c) => c !== "")

/** Parses RSS 2.0 or Atom text. Throws on anything else. */
export const parseFeedText = (xml: string): Feed => {
  const doc = parser.parse(xml, true) as Node
  const rss = doc["rss"] as Node | undefined
  if (rss) {
    const channel = (rss["channel"] ?? {}) as Node
    const items = (channel["item"] as Array<Node> | undefined) ?? []
    return {
      format: "rss",
      title: textOf(channel["title"]),
      link: textOf(channel["link"]),
      items: items.map((item) => {
        const link = textOf(item["link"])
        const date = isoOrNull(textOf(item["pubDate"]) || textOf(item["dc:date"]))
        return {
          id: textOf(item["guid"]) || link,
          title: textOf(item["title"]).trim(),
          link,
          summary: htmlText(textOf(item["description"]) || textOf(item["content:encoded"])),
          published: date,
          updated: date,
          categories: categoriesOf(item["category"])
        }
      })
    }
  }
  const atom = doc["feed"] as Node | undefined
  if (atom) {
    const entries = (atom["entry"] as Array<Node> | undefined) ?? []
    return {
      format: "atom",
      title: textOf(atom["title"]),
      link: atomLink(atom["link"]),
      items: entries.map((entry) => {
        const link = atomLink(entry["link"])
        return {
          id: textOf(entry["id"]) || link,
          title: htmlText(textOf(entry["title"])),
          link,
          summary: htmlText(textOf(entry["summary"]) || textOf(entry["content"])),
          published: isoOrNull(textOf(entry["published"]) || textOf(entry["updated"])),
          updated: isoOrNull(textOf(entry["updated"]) || textOf(entry["published"])),
          categories: categoriesOf(entry["category"])
        }
      })
    }
  }
  throw new Error("neither an RSS <rss> nor an Atom <feed> document")
}

/** A fetched document as a feed, failing with `invalid_feed` when it is not RSS or Atom. */
export const feed = (provider: string, fetched: Fetched): Effect.Effect<Feed, AdapterError> =>
  Effect.flatMap(text(provider, fetched), (xml) =>
    Effect.try({
      try: () => parseFeedText(xml),
      catch: (error) =>
        new AdapterError({
          provider,
          url: fetched.url,
          reason: "invalid_feed",
          message: `not an RSS or Atom feed: ${(error as Error).message}`
        })
    }))
