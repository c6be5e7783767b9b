import { Result, Schema, SchemaIssue } from "effect"
import { channelSettings } from "../../domain/Channel.ts"
import type { ChannelSettings, ChannelType } from "../../domain/Channel.ts"
import type { Destination, SendResult } from "../Sender.ts"
import { failure } from "./http.ts"

/**
 * A destination's settings checked against its type's schema at send time,
 * defaults applied: settings stored before a default existed still work, and
 * a destination built wrongly (masked secrets, another type's settings) ends
 * in a final error rather than a malformed request. Unknown fields are ignored.
 */
export const settingsOf = <T extends ChannelType>(type: T, destination: Destination): Result.Result<ChannelSettings[T], SendResult> => {
  if (destination.type !== type) return Result.fail(failure(0, false, `a ${destination.type} destination given to the ${type} sender`))
  const schema = channelSettings[type] as unknown as Schema.Decoder<ChannelSettings[T]>
  const decoded = Schema.decodeUnknownResult(schema)(destination.settings, { errors: "first" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const [issue] = SchemaIssue.makeFormatterStandardSchemaV1()(decoded.failure.issue).issues
  const field = (issue?.path ?? []).map((p) => String(typeof p === "object" && p !== null ? p.key : p)).join(".")
  const problem = issue === undefined ? "is invalid" : issue.message === "Missing key" ? "is required" : issue.message
  return Result.fail(failure(0, false, `invalid ${type} settings: ${field === "" ? "" : `${field} `}${problem}`))
}
