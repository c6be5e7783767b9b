import { Schema } from "effect"
import { HttpApiMiddleware } from "effect/http-api"

/**
 * The one error body of `/api/v1`: a stable machine `code`, a sentence for
 * people, and the request parameter at fault when there is one. Every error
 * class below encodes to exactly this shape (their `_tag` is omitted on the
 * wire and restored by the typed client from `code`).
 */
export const ErrorBody = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  field: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "Error" })
export type ErrorBody = typeof ErrorBody.Type

/** 400: a query or path parameter is malformed or out of range; `field` names it. */
export class InvalidParameter extends Schema.Error<InvalidParameter>("InvalidParameter")({
  _tag: Schema.tagDefaultOmit("InvalidParameter"),
  code: Schema.tag("invalid_parameter"),
  message: Schema.String,
  field: Schema.String
}, { httpApiStatus: 400, identifier: "InvalidParameter" }) {}

/** 404: the addressed resource does not exist (or is not visible to the caller). */
export class NotFound extends Schema.Error<NotFound>("NotFound")({
  _tag: Schema.tagDefaultOmit("NotFound"),
  code: Schema.tag("not_found"),
  message: Schema.String,
  field: Schema.optionalKey(Schema.String)
}, { httpApiStatus: 404, identifier: "NotFound" }) {}

/** 500: a failure of the service itself (a store down, a bug); details go to the log, not the client. */
export class InternalError extends Schema.Error<InternalError>("InternalError")({
  _tag: Schema.tagDefaultOmit("InternalError"),
  code: Schema.tag("internal_error"),
  message: Schema.String
}, { httpApiStatus: 500, identifier: "InternalError" }) {}

/**
 * Middleware every endpoint of the API carries: it turns request decoding
 * failures into `InvalidParameter` (naming the parameter) and unexpected
 * failures into `InternalError`, so no response leaves the API without the
 * one error body. The server implementation is `ApiErrorsLive` in
 * services/api/ApiHttp.ts.
 */
export class ApiErrors extends HttpApiMiddleware.Service<ApiErrors>()("statusgrid/domain/api/ApiErrors", {
  error: [InvalidParameter, InternalError]
}) {}
