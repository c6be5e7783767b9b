import type { Delivery } from "#services/domain/api/Notifications.ts"
import { Form } from "react-router"
import { DeliveryStatus } from "../../alerts/DeliveryTable.tsx"
import { CsrfField } from "../../Forms.tsx"
import { RelativeTime } from "../../RelativeTime.tsx"
import { channelTypeLabels } from "./fields.ts"

/**
 * The notification center's rows (the API's Delivery): what was sent, to
 * which channel, its status as a badge, attempts, the last error, when; a
 * Retry button on failed ones for those who may (the form posts
 * `intent=retry` and the delivery's id to the page's action).
 */
export function DeliveryRows({ deliveries, canRetry, showChannel }: {
  readonly deliveries: ReadonlyArray<Delivery>
  readonly org: string
  readonly canRetry: boolean
  readonly showChannel: boolean
}) {
  if (deliveries.length === 0) return <p className="muted">No delivery yet.</p>
  return (
    <table className="deliveries">
      <thead>
        <tr>
          {showChannel ? <th scope="col">Channel</th> : null}
          <th scope="col">What</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">When</th>
          {canRetry ? <th scope="col"><span className="visually-hidden">Actions</span></th> : null}
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr key={d.id} data-delivery={d.id}>
            {showChannel
              ? <td><strong>{d.channel.name}</strong> <span className="delivery-kind">{channelTypeLabels[d.channel.type]}</span></td>
              : null}
            <td>{d.event_type === "test" ? "Test notification" : d.event_type}{d.rule === null ? "" : <span className="delivery-kind"> · rule {d.rule.name}</span>}</td>
            <td><DeliveryStatus status={d.status} lastError={d.last_error} /></td>
            <td>{d.attempts} {d.attempts === 1 ? "attempt" : "attempts"}</td>
            <td>{d.delivered_at === null ? <RelativeTime date={d.created_at} /> : <RelativeTime date={d.delivered_at} />}</td>
            {canRetry
              ? (
                <td>
                  {d.status === "failed"
                    ? (
                      <Form method="post">
                        <CsrfField />
                        <input type="hidden" name="id" value={d.id} />
                        <button type="submit" name="intent" value="retry" className="button small secondary" aria-label={`Retry the delivery to ${d.channel.name}`}>Retry</button>
                      </Form>
                    )
                    : null}
                </td>
              )
              : null}
          </tr>
        ))}
      </tbody>
    </table>
  )
}
