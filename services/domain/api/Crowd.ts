import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { noNul } from "../Text.ts"
import { InvalidParameter, NotFound, RateLimited } from "./Errors.ts"

/** What a reporter says is wrong: a fixed list, so that no free text (and no personal data) is stored. */
export const crowdSymptoms = ["down", "slow", "login", "errors", "other"] as const
export const CrowdSymptom = Schema.Literals(crowdSymptoms)
export type CrowdSymptom = typeof CrowdSymptom.Type

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** `POST /sources/{key}/reports`. */
export const CrowdReportCreate = Schema.Struct({
  symptom: CrowdSymptom.annotate({ description: `What is wrong: ${crowdSymptoms.join(", ")}.` }),
  component_id: Schema.optionalKey(Schema.String.check(noNul).annotate({
    format: "uuid",
    description: "One of the source's components, by its id in `/sources/{key}/components`."
  })),
  region: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 100), noNul).annotate({
    description: "One of the source's regions (its `regions`, or a component's `region`), e.g. us-east-1."
  }))
}).annotate({ identifier: "CrowdReportCreate" })
export type CrowdReportCreate = typeof CrowdReportCreate.Type

/** The score's figures, for the source, a component or a region (services/domain/CrowdScore.ts, decision 0014). */
const scoreFields = {
  confidence: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 })).annotate({
    description: "0-100: how sure the crowd is that something is wrong (100: a one-in-a-million window by chance)."
  }),
  scored_minutes: Count.annotate({
    description: "The minutes the confidence and the figures below are of: the whole window (10), or its last 1, 2, 3 or 5 minutes when a burst there is more surprising."
  }),
  reporters: Count.annotate({ description: "Distinct reporters in those minutes." }),
  networks: Count.annotate({ description: "Distinct networks (an address's /24 or /48) they reported from." }),
  counted: Count.annotate({ description: "Reporters counted: at most 2 per network." }),
  expected: Schema.Number.annotate({
    description: "The usual reporters in those minutes at this hour of the week (and the hours beside it) over the last 4 weeks, at least 0.2 per 10 minutes."
  }),
  corroborating: Count.annotate({ description: "Organizations whose monitors of the provider fail at the same time." }),
  reason: Schema.String.annotate({ description: "Why, in a sentence: \"23 reporters in 10 min, usually 1 or fewer.\"" })
}

export const CrowdComponentScore = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  name: Schema.String,
  ...scoreFields
}).annotate({ identifier: "CrowdComponentScore" })
export type CrowdComponentScore = typeof CrowdComponentScore.Type

export const CrowdRegionScore = Schema.Struct({
  region: Schema.String,
  ...scoreFields
}).annotate({ identifier: "CrowdRegionScore" })
export type CrowdRegionScore = typeof CrowdRegionScore.Type

/** A source's open crowd signal (decision 0015): users report problems, whatever the official status says. */
export const CrowdSignal = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" }),
  started_at: Schema.String.annotate({ format: "date-time" }),
  start_confidence: Schema.Int.annotate({ description: "The confidence that started it (at least 70)." }),
  peak_confidence: Schema.Int.annotate({ description: "The highest confidence since." }),
  reason: Schema.String.annotate({ description: "The score's sentence when it started." })
}).annotate({ identifier: "CrowdSignal" })
export type CrowdSignal = typeof CrowdSignal.Type

/** `GET /sources/{key}/crowd`: the score of a source now, and of each component and region reported in the window. */
export const CrowdSourceScore = Schema.Struct({
  key: Schema.String,
  at: Schema.String.annotate({ format: "date-time", description: "The moment the score is for." }),
  window_minutes: Count.annotate({ description: "The window reporters are counted in." }),
  ...scoreFields,
  components: Schema.Array(CrowdComponentScore).annotate({ description: "Components reported in the window, highest confidence first." }),
  regions: Schema.Array(CrowdRegionScore).annotate({ description: "Regions reported in the window, highest confidence first." }),
  signal: Schema.NullOr(CrowdSignal).annotate({
    description: "The source's crowd signal while one is on (from 70 % with 3 reporters counted until below 30 %), else null."
  })
}).annotate({ identifier: "CrowdScore" })
export type CrowdSourceScore = typeof CrowdSourceScore.Type

/** `POST /sources/{key}/reports`: whether the report counted, and the score with it. */
export const CrowdReportAccepted = Schema.Struct({
  counted: Schema.Boolean.annotate({
    description: "false when this reporter had already reported this source in the current 10-minute window."
  }),
  score: CrowdSourceScore
}).annotate({ identifier: "CrowdReportAccepted" })
export type CrowdReportAccepted = typeof CrowdReportAccepted.Type

/** `GET /sources/{key}/crowd/record`: the crowd against the official status over 90 days (services/domain/CrowdRecord.ts). */
export const CrowdRecordView = Schema.Struct({
  key: Schema.String,
  days: Count.annotate({ description: "The rolling period (90 days)." }),
  signals: Count.annotate({ description: "Crowd signals that started in the period." }),
  onsets: Count.annotate({ description: "Official onsets: the status page leaving operational or opening an incident (one per hour of trouble)." }),
  led: Count.annotate({ description: "Onsets a crowd signal came before (at most 60 minutes before)." }),
  led_percent: Schema.NullOr(Schema.Int).annotate({ description: "led ÷ onsets, 0-100; null without onsets." }),
  median_lead_minutes: Schema.NullOr(Schema.Number).annotate({ description: "Median minutes from the signal to the official onset, over led onsets." }),
  false_alarms: Count.annotate({ description: "Signals with the official status operational that no onset followed within 60 minutes." }),
  false_alarms_per_30_days: Schema.Number,
  pending: Count.annotate({ description: "Signals of the last 60 minutes not yet followed: neither a lead nor a false alarm yet." }),
  sentence: Schema.String.annotate({ description: "\"statusgrid users usually see problems with X 7 minutes before its status page (…)\"" })
}).annotate({ identifier: "CrowdRecord" })
export type CrowdRecordView = typeof CrowdRecordView.Type

const KeyParams = { key: Schema.String.annotate({ description: "The source's key." }) }

/** Users' reports of a problem with a catalog source, and the crowd's confidence (public, no key). */
export class CrowdGroup extends HttpApiGroup.make("crowd")
  .add(
    HttpApiEndpoint.post("report", "/:key/reports", {
      params: KeyParams,
      payload: CrowdReportCreate,
      success: CrowdReportAccepted.pipe(HttpApiSchema.status(202)),
      error: [NotFound, InvalidParameter, RateLimited]
    }).annotateMerge(OpenApi.annotations({
      summary: "Report a problem with a source",
      description: "Anonymous, or as the signed-in person (the portal's session cookie). A reporter counts once per source " +
        "per 10-minute window; reporters are stored only as keyed hashes. At most `CROWD_REPORTS_PER_MINUTE` (10) reports " +
        "per minute from one address, then 429 with Retry-After."
    })),
    HttpApiEndpoint.get("score", "/:key/crowd", {
      params: KeyParams,
      success: CrowdSourceScore,
      error: NotFound
    }).annotateMerge(OpenApi.annotations({
      summary: "The crowd's confidence that a source has a problem",
      description: "Distinct reporters of the last 10 minutes (at most 2 per network) against the source's usual at this hour " +
        "of the week, as a confidence from 0 to 100 with the reason; per component and per region reported (decision 0014)."
    })),
    HttpApiEndpoint.get("record", "/:key/crowd/record", {
      params: KeyParams,
      success: CrowdRecordView,
      error: NotFound
    }).annotateMerge(OpenApi.annotations({
      summary: "How early the crowd sees a source's problems",
      description: "Over the last 90 days: official onsets, how many a crowd signal came before and by how many minutes (median), " +
        "and false alarms (decision 0015)."
    }))
  )
  .prefix("/sources")
  .annotateMerge(OpenApi.annotations({
    title: "Crowd reports",
    description: "Users' reports of problems with catalog sources and the confidence computed from them."
  }))
{}
