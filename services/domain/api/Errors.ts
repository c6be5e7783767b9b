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

/**
 * Builds one error class of the API: `_tag` (omitted on the wire), the stable
 * `code`, `message`, and the class's own `fields`; `status` is the HTTP
 * status the error is answered with.
 */
const apiError =
  <Self>() =>
  <const Tag extends string, const Code extends string, const Fields extends Schema.Struct.Fields>(
    tag: Tag,
    code: Code,
    status: number,
    fields: Fields
  ) =>
    Schema.Error<Self>(tag)(
      { _tag: Schema.tagDefaultOmit(tag), code: Schema.tag(code), message: Schema.String, ...fields },
      { httpApiStatus: status, identifier: tag }
    )

/** 400: a query or path parameter is malformed or out of range; `field` names it. */
export class InvalidParameter extends apiError<InvalidParameter>()(
  "InvalidParameter", "invalid_parameter", 400, { field: Schema.String }
) {}

/** 404: the addressed resource does not exist (or is not visible to the caller). */
export class NotFound extends apiError<NotFound>()(
  "NotFound", "not_found", 404, { field: Schema.optionalKey(Schema.String) }
) {}

/** 401: no credentials, or credentials that are unknown, revoked or expired. */
export class Unauthorized extends apiError<Unauthorized>()("Unauthorized", "unauthorized", 401, {}) {}

/** 403: the caller's role does not allow this action (Permissions.ts). */
export class Forbidden extends apiError<Forbidden>()("Forbidden", "forbidden", 403, {}) {}

/** 402: the organization's plan does not allow more of something; `field` names the limit (e.g. `max_stacks`). */
export class PlanLimitReached extends apiError<PlanLimitReached>()(
  "PlanLimitReached", "plan_limit", 402, { field: Schema.String }
) {}

/** 409: the request conflicts with existing data (a duplicate slug, an item already in a stack). */
export class Conflict extends apiError<Conflict>()(
  "Conflict", "conflict", 409, { field: Schema.optionalKey(Schema.String) }
) {}

/** 413: the request body is larger than the API accepts. */
export class PayloadTooLarge extends apiError<PayloadTooLarge>()("PayloadTooLarge", "payload_too_large", 413, {}) {}

/** 415: a body that is not JSON (`text/plain`, a form); `field` is `content-type`. */
export class UnsupportedMediaType extends apiError<UnsupportedMediaType>()(
  "UnsupportedMediaType", "unsupported_media_type", 415, { field: Schema.String }
) {}

/** 422: well-formed, but cannot be done (a status page whose provider cannot be detected). */
export class Unprocessable extends apiError<Unprocessable>()(
  "Unprocessable", "unprocessable", 422, { field: Schema.optionalKey(Schema.String) }
) {}

/** 429: too many requests for this API key; retry after `retry_after_s` (also the Retry-After header). */
export class RateLimited extends apiError<RateLimited>()(
  "RateLimited", "rate_limited", 429, { retry_after_s: Schema.Number }
) {}

/** 500: a failure of the service itself (a store down, a bug); details go to the log, not the client. */
export class InternalError extends apiError<InternalError>()("InternalError", "internal_error", 500, {}) {}

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
