/** The cache validators of a URL's last 2xx answer. */
export interface Validators {
  readonly etag?: string
  readonly lastModified?: string
}

type Headers = Readonly<Record<string, string>>

/** A URL's validators (the entry is its own `Validators`: one object per URL). */
interface Entry extends Validators {
  /** The request's headers with the conditional ones, built once per validators (each check sends them). */
  readonly headers: Headers
  /** Answered again since it entered the cache or was last spared (second chance, below). */
  answered: boolean
}

/**
 * Validators per URL, bounded to `maxUrls` entries. Beyond it a URL not answered since it was
 * remembered (or last spared) is forgotten, oldest first: a URL answered again is spared once and
 * moves to the end (the "second chance" approximation of least recently answered). An answer that
 * repeats a URL's validators (most checks: a 304, or a 200 with the same ETag) changes nothing but
 * that mark, so the hot path neither re-inserts into the Map nor allocates. Entries are about
 * 300-400 bytes with their headers, so the default bound (200,000 URLs, far above the catalog's 5,243 sources times
 * their few endpoints) caps this at roughly 80 MB.
 */
export class ValidatorCache {
  readonly maxUrls: number
  readonly #base: Headers
  readonly #entries = new Map<string, Entry>()

  /** `base`: the headers every request sends, to which the conditional ones are added. */
  constructor(maxUrls: number, base: Headers = {}) {
    this.maxUrls = Math.max(0, maxUrls)
    this.#base = base
  }

  get size(): number {
    return this.#entries.size
  }

  get(url: string): Validators | undefined {
    return this.#entries.get(url)
  }

  /** The headers of a conditional request for `url`: the base ones when nothing is remembered. */
  headers(url: string): Headers {
    return this.#entries.get(url)?.headers ?? this.#base
  }

  /**
   * An answer for `url` carried these validators (a 2xx's, or a 304's with the previous ones kept
   * where it has none): remembered, the URL forgotten when both are undefined.
   */
  answered(url: string, etag: string | undefined, lastModified: string | undefined): void {
    const known = this.#entries.get(url)
    if (known !== undefined && known.etag === etag && known.lastModified === lastModified) {
      known.answered = true
      return
    }
    if (etag === undefined && lastModified === undefined) {
      if (known !== undefined) this.#entries.delete(url)
      return
    }
    if (this.maxUrls === 0) return
    const validators: Validators = { ...(etag !== undefined ? { etag } : {}), ...(lastModified !== undefined ? { lastModified } : {}) }
    const entry: Entry = { ...validators, headers: { ...this.#base, ...conditionalHeaders(validators) }, answered: false }
    if (known !== undefined) {
      // New validators for a remembered URL: it keeps its place, answered since.
      this.#entries.set(url, { ...entry, answered: true })
      return
    }
    this.#makeRoom()
    this.#entries.set(url, entry)
  }

  /** Forgets entries until one more fits: the oldest not answered since it came or was spared. */
  #makeRoom() {
    while (this.#entries.size >= this.maxUrls) {
      const oldest = this.#entries.entries().next()
      if (oldest.done === true) return
      const [url, entry] = oldest.value
      this.#entries.delete(url)
      if (entry.answered) {
        entry.answered = false
        this.#entries.set(url, entry)
      }
    }
  }
}

/** Request headers for a conditional GET, empty when nothing is known. */
export const conditionalHeaders = (validators: Validators | undefined): Record<string, string> => {
  const headers: Record<string, string> = {}
  if (validators?.etag !== undefined) headers["if-none-match"] = validators.etag
  if (validators?.lastModified !== undefined) headers["if-modified-since"] = validators.lastModified
  return headers
}
