/** The cache validators of a URL's last 2xx answer. */
export interface Validators {
  readonly etag?: string
  readonly lastModified?: string
}

/**
 * Validators per URL, bounded to `maxUrls` entries: beyond it the least
 * recently answered URL is forgotten (its next request is unconditional).
 * A Map keeps insertion order, and `set` re-inserts, so the first key is the
 * least recently answered one. Entries are about 200-300 bytes, so the
 * default bound (200,000 URLs, far above the catalog's 5,243 sources times
 * their few endpoints) caps this at roughly 60 MB.
 */
export class ValidatorCache {
  readonly maxUrls: number
  readonly #entries = new Map<string, Validators>()

  constructor(maxUrls: number) {
    this.maxUrls = Math.max(0, maxUrls)
  }

  get size(): number {
    return this.#entries.size
  }

  get(url: string): Validators | undefined {
    return this.#entries.get(url)
  }

  /** Remembers `validators` for `url`, or forgets the URL when they are empty. */
  set(url: string, validators: Validators): void {
    this.#entries.delete(url)
    if (validators.etag === undefined && validators.lastModified === undefined) return
    if (this.maxUrls === 0) return
    this.#entries.set(url, validators)
    while (this.#entries.size > this.maxUrls) {
      const oldest = this.#entries.keys().next()
      if (oldest.done === true) break
      this.#entries.delete(oldest.value)
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
