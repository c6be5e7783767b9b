import { durationText, uptimeText } from "../domain/FigureText.ts"
import type { ReportContent } from "../domain/Report.ts"

export { durationText, uptimeText }

/**
 * A report's figures as text, HTML (an e-mail body readable in common mail
 * clients: tables with inline styles, no script, no external image) and CSV
 * (one row per stack and per item). All three, and the PDF
 * (ReportPdf.ts), write numbers with the functions below, so they agree.
 */

export const slaText = (met: boolean | null): string => (met === null ? "not measured" : met ? "met" : "missed")

/** "2026-11-16 to 2026-11-23 (Europe/Paris)": the period's local dates. */
export const periodText = (content: ReportContent): string => {
  const day = (iso: string) => new Intl.DateTimeFormat("en-CA", { timeZone: content.schedule.time_zone, dateStyle: "short" }).format(new Date(iso))
  return `${day(content.from)} to ${day(content.to)} (${content.schedule.time_zone})`
}

export const reportTitle = (content: ReportContent): string =>
  `${content.organization.name}: ${content.schedule.frequency} uptime report, ${periodText(content)}`

export const reportText = (content: ReportContent, link: string): string =>
  [
    reportTitle(content),
    `Target: ${content.schedule.sla_target} % uptime.`,
    "",
    ...content.stacks.flatMap((s) => [
      `${s.name}: uptime ${uptimeText(s.uptime)} (target ${slaText(s.sla_met)}), downtime ${durationText(s.downtime_ms)}, ` +
      `${s.outage_count} outage${s.outage_count === 1 ? "" : "s"}, MTTR ${durationText(s.mttr_ms)}, ${s.incidents.count} provider incident${s.incidents.count === 1 ? "" : "s"}`,
      ...s.items.map((i) => `  - ${i.name}: ${uptimeText(i.uptime)}, downtime ${durationText(i.downtime_ms)}`)
    ]),
    ...(content.stacks.length === 0 ? ["No stack to report on."] : []),
    "",
    ...(content.slowest_monitors.length === 0 ? [] : [
      "Slowest monitors:",
      ...content.slowest_monitors.map((m) => `  - ${m.name}: mean ${Math.round(m.mean_ms)} ms, p95 ${Math.round(m.p95_ms)} ms`),
      ""
    ]),
    `The report online, with CSV and PDF: ${link}`
  ].join("\n")

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)
const cell = "padding:6px 10px;border-bottom:1px solid #ddd;text-align:left"

export const reportHtml = (content: ReportContent, link: string): string => {
  const rows = content.stacks.map((s) =>
    `<tr><th style="${cell}">${escape(s.name)}</th><td style="${cell}">${uptimeText(s.uptime)}</td>` +
    `<td style="${cell};color:${s.sla_met === false ? "#b42318" : "#067647"}">${slaText(s.sla_met)}</td>` +
    `<td style="${cell}">${durationText(s.downtime_ms)}</td><td style="${cell}">${s.outage_count}</td>` +
    `<td style="${cell}">${durationText(s.mttr_ms)}</td><td style="${cell}">${s.incidents.count}</td></tr>`
  ).join("\n")
  const items = content.stacks.map((s) =>
    `<h3 style="margin:18px 0 6px">${escape(s.name)}</h3>\n<table style="border-collapse:collapse;width:100%">` +
    `<tr><th style="${cell}">Item</th><th style="${cell}">Uptime</th><th style="${cell}">Downtime</th><th style="${cell}">Outages</th></tr>\n` +
    s.items.map((i) =>
      `<tr><td style="${cell}">${escape(i.name)}</td><td style="${cell}">${uptimeText(i.uptime)}</td>` +
      `<td style="${cell}">${durationText(i.downtime_ms)}</td><td style="${cell}">${i.outage_count}</td></tr>`
    ).join("\n") + "</table>"
  ).join("\n")
  const slow = content.slowest_monitors.length === 0 ? "" :
    `<h2 style="font-size:18px">Slowest monitors</h2>\n<table style="border-collapse:collapse;width:100%">` +
    `<tr><th style="${cell}">Monitor</th><th style="${cell}">Mean</th><th style="${cell}">p95</th><th style="${cell}">Checks</th></tr>\n` +
    content.slowest_monitors.map((m) =>
      `<tr><td style="${cell}">${escape(m.name)}</td><td style="${cell}">${Math.round(m.mean_ms)} ms</td>` +
      `<td style="${cell}">${Math.round(m.p95_ms)} ms</td><td style="${cell}">${m.checks}</td></tr>`
    ).join("\n") + "</table>"
  return [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8"><title>${escape(reportTitle(content))}</title></head>`,
    `<body style="font-family:Arial,Helvetica,sans-serif;color:#1d2939;max-width:760px;margin:0 auto;padding:16px">`,
    `<h1 style="font-size:22px">${escape(reportTitle(content))}</h1>`,
    `<p>Uptime target: <strong>${content.schedule.sla_target} %</strong>. A stack is down while its banner shows an outage; ` +
    "maintenance and time nobody saw are left out.</p>",
    `<table style="border-collapse:collapse;width:100%"><tr><th style="${cell}">Stack</th><th style="${cell}">Uptime</th>` +
    `<th style="${cell}">Target</th><th style="${cell}">Downtime</th><th style="${cell}">Outages</th><th style="${cell}">MTTR</th>` +
    `<th style="${cell}">Incidents</th></tr>`,
    rows || `<tr><td style="${cell}" colspan="7">No stack to report on.</td></tr>`,
    "</table>",
    items,
    slow,
    `<p style="margin-top:24px"><a href="${escape(link)}">The report online</a> (CSV and PDF attached).</p>`,
    "</body></html>"
  ].join("\n")
}

const csvField = (v: string | number | null): string => {
  const s = v === null ? "" : String(v)
  return /[",\n\r]/.test(s) || /^[=+\-@]/.test(s) ? `"${s.replace(/"/g, "\"\"")}"` : s
}

const pct = (u: number | null) => (u === null ? null : u.toFixed(3))
const sec = (ms: number | null) => (ms === null ? null : Math.round(ms / 1000))

/** One row per stack (item empty) and per item; uptime in percent with three decimals, times in seconds. */
export const reportCsv = (content: ReportContent): string => {
  const header = ["period_start", "period_end", "stack", "item", "kind", "uptime_percent", "downtime_s", "outages", "mttr_s", "sla_target_percent", "sla_met"]
  const rows = content.stacks.flatMap((s) => [
    [content.from, content.to, s.name, "", "stack", pct(s.uptime), sec(s.downtime_ms), s.outage_count, sec(s.mttr_ms), content.schedule.sla_target, s.sla_met === null ? "" : String(s.sla_met)],
    ...s.items.map((i) => [content.from, content.to, s.name, i.name, i.kind, pct(i.uptime), sec(i.downtime_ms), i.outage_count, null, null, ""])
  ])
  return [header, ...rows].map((r) => r.map(csvField).join(",")).join("\r\n") + "\r\n"
}
