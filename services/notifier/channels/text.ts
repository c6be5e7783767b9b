/** Text helpers shared by the channel formats. */

/** `text` cut to at most `max` characters (code points, so an emoji is never split), ending in "…" when cut. */
export const clip = (text: string, max: number): string => {
  const chars = [...text]
  return chars.length <= max ? text : `${chars.slice(0, Math.max(0, max - 1)).join("")}…`
}

/** Length in code points: what a person counts, and how SMS limits are stated. */
export const charLength = (text: string): number => [...text].length

export const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")
