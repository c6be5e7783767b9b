import Pdfkit from "pdfkit"
import type { ReportContent } from "../domain/Report.ts"
import { durationText, reportTitle, slaText, uptimeText } from "./ReportFormats.ts"

/**
 * A report as a PDF, drawn with pdfkit (a kept library: 8 M downloads a
 * month, text as real PDF text, the standard Helvetica font so nothing is
 * embedded): the title, the target, each stack with its items and outages,
 * the slowest monitors. The figures are written by ReportFormats' functions,
 * as in the e-mail and the CSV.
 */
export const reportPdf = (content: ReportContent): Promise<Uint8Array> =>
  new Promise((resolve, reject) => {
    const doc = new Pdfkit({ size: "A4", margin: 50, info: { Title: reportTitle(content), Author: "statusgrid" } })
    const chunks: Array<Buffer> = []
    doc.on("data", (chunk: Buffer) => chunks.push(chunk))
    doc.on("end", () => resolve(new Uint8Array(Buffer.concat(chunks))))
    doc.on("error", reject)

    doc.font("Helvetica-Bold").fontSize(16).text(reportTitle(content))
    doc.moveDown(0.5).font("Helvetica").fontSize(10)
      .text(`Uptime target: ${content.schedule.sla_target} %. A stack is down while its banner shows an outage; maintenance and time nobody saw are left out.`)
    if (content.stacks.length === 0) doc.moveDown().text("No stack to report on.")
    for (const s of content.stacks) {
      doc.moveDown().font("Helvetica-Bold").fontSize(13).text(s.name)
      doc.font("Helvetica").fontSize(10)
        .text(`Uptime ${uptimeText(s.uptime)} - target ${slaText(s.sla_met)} (allowed downtime ${durationText(s.allowed_downtime_ms)})`)
        .text(`Downtime ${durationText(s.downtime_ms)}, ${s.outage_count} outage${s.outage_count === 1 ? "" : "s"}, MTTR ${durationText(s.mttr_ms)}`)
        .text(`Provider incidents: ${s.incidents.count}, MTTR ${durationText(s.incidents.mttr_ms)}`)
      for (const o of s.outages.slice(0, 20)) {
        doc.text(`  Outage ${o.start.slice(0, 16).replace("T", " ")} UTC, ${o.end === null ? "still down" : durationText(o.duration_ms)}`)
      }
      doc.moveDown(0.3)
      for (const i of s.items) {
        doc.text(`  ${i.name} (${i.kind}): ${uptimeText(i.uptime)}, downtime ${durationText(i.downtime_ms)}, ${i.outage_count} outage${i.outage_count === 1 ? "" : "s"}`)
      }
    }
    if (content.slowest_monitors.length > 0) {
      doc.moveDown().font("Helvetica-Bold").fontSize(13).text("Slowest monitors")
      doc.font("Helvetica").fontSize(10)
      for (const m of content.slowest_monitors) doc.text(`  ${m.name}: mean ${Math.round(m.mean_ms)} ms, p95 ${Math.round(m.p95_ms)} ms, ${m.checks} checks`)
    }
    doc.moveDown().fontSize(8).fillColor("#667085").text(`Generated ${content.generated_at.slice(0, 16).replace("T", " ")} UTC by statusgrid.`)
    doc.end()
  })
