import { Effect } from "effect"
import { AdapterError, type Fetched } from "./Adapter.ts"

const utf8 = new TextDecoder("utf-8")
const utf16le = new TextDecoder("utf-16le")
const utf16be = new TextDecoder("utf-16be")

/** The `charset` parameter of a Content-Type header, lower-cased, or null. */
const charsetOf = (contentType: string): string | null =>
  /;\s*charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType)?.[1]?.toLowerCase() ?? null

/**
 * The `encoding` of an XML declaration (`<?xml version="1.0" encoding="windows-1252"?>`), lower-cased,
 * or null. The declaration is ASCII, so it is read from the first bytes before anything is decoded.
 */
export const xmlDeclaredEncoding = (body: Uint8Array): string | null => {
  const head = String.fromCharCode(...body.subarray(0, 200))
  return /^\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head)?.[1]?.toLowerCase() ?? null
}

type Decoder = InstanceType<typeof TextDecoder>
const decoders = new Map<string, Decoder | null>()

/**
 * The decoder of a charset label as the WHATWG Encoding Standard names them (windows-1252,
 * iso-8859-1, which is read as windows-1252 like browsers do, shift_jis, koi8-r, …), or null for a
 * label it does not know or maps to its "replacement" encoding.
 */
const decoderFor = (label: string): Decoder | null => {
  if (!decoders.has(label)) {
    let decoder: Decoder | null = null
    try {
      decoder = new TextDecoder(label)
    } catch {
      // RangeError: an unknown label, or one of the encodings WHATWG replaces (iso-2022-kr, hz-gb-2312, …).
    }
    decoders.set(label, decoder)
  }
  return decoders.get(label)!
}

const isUtf16 = (label: string): boolean => /^(?:utf-?16|ucs-?2|unicode)$/.test(label)

/**
 * Body bytes as text, by the first of: a byte-order mark; the Content-Type's
 * `charset` (AWS serves its current-events JSON as UTF-16, old feeds are
 * windows-1252 or ISO-8859-1); an XML declaration's `encoding`; UTF-8. An
 * unknown charset reads as UTF-8. RFC 7303 puts the HTTP charset before the
 * XML declaration; a UTF-16 declaration in a document whose bytes are ASCII
 * (it was read as ASCII to get here) is ignored, as the XML spec says.
 */
export const decodeText = (body: Uint8Array, contentType = ""): string => {
  if (body.length >= 2 && body[0] === 0xff && body[1] === 0xfe) return utf16le.decode(body.subarray(2))
  if (body.length >= 2 && body[0] === 0xfe && body[1] === 0xff) return utf16be.decode(body.subarray(2))
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return utf8.decode(body.subarray(3))
  const charset = charsetOf(contentType)
  if (charset !== null && isUtf16(charset)) {
    // No BOM: guess the byte order from where the zero bytes of ASCII characters sit.
    return body.length >= 2 && body[0] === 0 ? utf16be.decode(body) : utf16le.decode(body)
  }
  const label = charset ?? xmlDeclaredEncoding(body)
  const decoder = label === null || isUtf16(label) ? utf8 : decoderFor(label) ?? utf8
  return decoder.decode(body)
}

const named: Readonly<Record<string, number>> = {
  quot: 34, amp: 38, apos: 39, lt: 60, gt: 62, OElig: 338, oelig: 339, Scaron: 352, scaron: 353, Yuml: 376, fnof: 402,
  circ: 710, tilde: 732, ensp: 8194, emsp: 8195, thinsp: 8201, zwnj: 8204, zwj: 8205, lrm: 8206, rlm: 8207, ndash: 8211,
  mdash: 8212, lsquo: 8216, rsquo: 8217, sbquo: 8218, ldquo: 8220, rdquo: 8221, bdquo: 8222, dagger: 8224, Dagger: 8225,
  bull: 8226, hellip: 8230, permil: 8240, prime: 8242, Prime: 8243, lsaquo: 8249, rsaquo: 8250, euro: 8364, trade: 8482,
  larr: 8592, uarr: 8593, rarr: 8594, darr: 8595, harr: 8596, minus: 8722, le: 8804, ge: 8805, ne: 8800, check: 10003,
  // Latin-1, U+00A0 to U+00FF in order.
  ...Object.fromEntries(
    ("nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro " +
      "para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil " +
      "Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave " +
      "Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml " +
      "igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute " +
      "thorn yuml").split(" ").map((name, i) => [name, 0xa0 + i])
  )
}

/** HTML reads numeric references to U+0080-U+009F as windows-1252 (`&#146;` is ’), as browsers do. */
const c1 = new TextDecoder("windows-1252")

const fromCodePoint = (n: number): string => {
  if (n === 0 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff) || Number.isNaN(n)) return "\ufffd"
  return n >= 0x80 && n <= 0x9f ? c1.decode(new Uint8Array([n])) : String.fromCodePoint(n)
}

/**
 * HTML character references as text: `&amp;` and the common named ones (Latin-1, typographic
 * quotes and dashes, …), decimal `&#8217;` and hexadecimal `&#x2019;`. An unknown name is left as
 * written. Decoding is one pass: `&amp;lt;` is `&lt;`, never `<`.
 */
export const decodeEntities = (html: string): string =>
  html.replace(/&(?:#(\d{1,8})|#[xX]([0-9a-fA-F]{1,8})|([A-Za-z][A-Za-z0-9]{1,31}));/g, (entity, dec?: string, hex?: string, name?: string) => {
    if (dec !== undefined) return fromCodePoint(Number(dec))
    if (hex !== undefined) return fromCodePoint(parseInt(hex, 16))
    return Object.hasOwn(named, name!) ? String.fromCodePoint(named[name!]!) : entity
  })

/**
 * The text of an HTML fragment: tags and comments removed (a `<` not followed by a tag name is
 * text, as in HTML), then character references decoded, so `&lt;b&gt;` shows as `<b>` and is not
 * taken for a tag; whitespace collapsed.
 */
export const htmlText = (html: string): string =>
  decodeEntities(html.replace(/<!--[\s\S]*?(?:-->|$)|<[/!?]?[A-Za-z][^>]*>?/g, " ")).replace(/\s+/g, " ").trim()

/** Whether a body looks like an HTML page rather than data. */
export const looksLikeHtml = (text: string): boolean => /^\s*(<!doctype html|<html[\s>])/i.test(text)

/**
 * A fetched document as JSON. Fails with a clear reason for a non-2xx status,
 * an HTML page answering a JSON path (SPA catch-all), or a body that is not
 * JSON (including a truncated one).
 */
export const json = (provider: string, fetched: Fetched): Effect.Effect<unknown, AdapterError> =>
  Effect.suspend(() => {
    const text = httpText(provider, fetched)
    if (typeof text !== "string") return text
    if (looksLikeHtml(text)) {
      return Effect.fail(new AdapterError({
        provider,
        url: fetched.url,
        reason: "html_catch_all",
        message: "the server answered a JSON path with an HTML page"
      }))
    }
    try {
      return Effect.succeed(JSON.parse(text) as unknown)
    } catch (error) {
      return Effect.fail(new AdapterError({
        provider,
        url: fetched.url,
        reason: "not_json",
        message: `the body is not valid JSON (${(error as Error).message}; ${fetched.body.length} bytes)`
      }))
    }
  })

/** A fetched document as text, failing on a non-2xx status. */
export const text = (provider: string, fetched: Fetched): Effect.Effect<string, AdapterError> =>
  Effect.suspend(() => {
    const result = httpText(provider, fetched)
    return typeof result === "string" ? Effect.succeed(result) : result
  })

const httpText = (provider: string, fetched: Fetched): string | Effect.Effect<never, AdapterError> =>
  fetched.status >= 200 && fetched.status < 300
    ? decodeText(fetched.body, fetched.contentType)
    : Effect.fail(new AdapterError({
      provider,
      url: fetched.url,
      reason: "http_status",
      message: `HTTP ${fetched.status}`
    }))

/** `base` (a page URL, maybe with a path prefix) joined with an absolute `path`. */
export const joinUrl = (base: string, path: string): string => {
  const url = new URL(base)
  url.pathname = url.pathname.replace(/\/+$/, "") + path
  url.search = ""
  url.hash = ""
  return url.toString()
}
