/**
 * How figures read, in every page, e-mail, CSV and PDF: a duration and an
 * uptime percentage. Plain TypeScript, for the server and the browser.
 */

/** "2 h 05 min", "45 s", "3 d 4 h"; "-" for none. */
export const durationText = (ms: number | null): string => {
  if (ms === null) return "-"
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min`
  const h = Math.floor(m / 60)
  if (h < 48) return `${h} h ${String(m % 60).padStart(2, "0")} min`
  return `${Math.floor(h / 24)} d ${h % 24} h`
}

/** "99.950 %" (three decimals; "100 %" only when nothing counted was down), or "no data". */
export const uptimeText = (uptime: number | null): string =>
  uptime === null ? "no data" : `${uptime >= 99.9995 ? "100" : uptime.toFixed(3)} %`
