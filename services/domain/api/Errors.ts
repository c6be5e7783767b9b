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

/** 401: no credentials, or credentials that are unknown, revoked or expired. */
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")({
  _tag: Schema.tagDefaultOmit("Unauthorized"),
  code: Schema.tag("unauthorized"),
  message: Schema.String
}, { httpApiStatus: 401, identifier: "Unauthorized" }) {}

/** 403: the caller's role does not allow this action (Permissions.ts). */
export class Forbidden extends Schema.Error<Forbidden>("Forbidden")({
  _tag: Schema.tagDefaultOmit("Forbidden"),
  code: Schema.tag("forbidden"),
  message: Schema.String
}, { httpApiStatus: 403, identifier: "Forbidden" }) {}

/** 402: the organization's plan does not allow more of something; `field` names the limit (e.g. `max_stacks`). */
export class PlanLimitReached extends Schema.Error<PlanLimitReached>("PlanLimitReached")({
  _tag: Schema.tagDefaultOmit("PlanLimitReached"),
  code: Schema.tag("plan_limit"),
  message: Schema.String,
  field: Schema.String
}, { httpApiStatus: 402, identifier: "PlanLimitReached" }) {}

/** 409: the request conflicts with existing data (a duplicate slug, an item already in a stack). */
export class Conflict extends Schema.Error<Conflict>("Conflict")({
  _tag: Schema.tagDefaultOmit("Conflict"),
  code: Schema.tag("conflict"),
  message: Schema.String,
  field: Schema.optionalKey(Schema.String)
}, { httpApiStatus: 409, identifier: "Conflict" }) {}

/** 413: the request body is larger than the API accepts. */
export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")({
  _tag: Schema.tagDefaultOmit("PayloadTooLarge"),
  code: Schema.tag("payload_too_large"),
  message: Schema.String
}, { httpApiStatus: 413, identifier: "PayloadTooLarge" }) {}

/** 415: a body that is not JSON (`text/plain`, a form); `field` is `content-type`. */
export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")({
  _tag: Schema.tagDefaultOmit("UnsupportedMediaType"),
  code: Schema.tag("unsupported_media_type"),
  message: Schema.String,
  field: Schema.String
}, { httpApiStatus: 415, identifier: "UnsupportedMediaType" }) {}

/** 422: well-formed, but cannot be done (a status page whose provider cannot be detected). */
export class Unprocessable extends Schema.Error<Unprocessable>("Unprocessable")({
  _tag: Schema.tagDefaultOmit("Unprocessable"),
  code: Schema.tag("unprocessable"),
  message: Schema.String,
  field: Schema.optionalKey(Schema.String)
}, { httpApiStatus: 422, identifier: "Unprocessable" }) {}

/** 429: too many requests for this API key; retry after `retry_after_s` (also the Retry-After header). */
export class RateLimited extends Schema.Error<RateLimited>("RateLimited")({
  _tag: Schema.tagDefaultOmit("RateLimited"),
  code: Schema.tag("rate_limited"),
  message: Schema.String,
  retry_after_s: Schema.Number
}, { httpApiStatus: 429, identifier: "RateLimited" }) {}

/** 500: a failure of the service itself (a store down, a bug); details go to the log, not the client. */
export class InternalError extends Schema.Error<InternalError>("InternalError")({
  _tag: Schema.tagDefaultOmit("InternalError"),
  code: Schema.tag("internal_error"),
  message: Schema.String
}, { httpApiStatus: 500, identifier: "InternalError" }) {}

/**
 * Middleware every endpoint of the API carries: it turns request decoding
 * failures into `InvalidParameter` (naming the parameter), a body that is not
 * JSON into `UnsupportedMediaType`, and unexpected
 * failures into `InternalError`, so no response leaves the API without the
 * one error body. The server implementation is `ApiErrorsLive` in
 * services/api/ApiHttp.ts.
 */
export class ApiErrors extends HttpApiMiddleware.Service<ApiErrors>()("statusgrid/domain/api/ApiErrors", {
  error: [InvalidParameter, PayloadTooLarge, UnsupportedMediaType, InternalError]
}) {}
