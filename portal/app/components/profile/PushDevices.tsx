import { type FormEvent, useEffect, useState } from "react"
import { Link, useFetcher } from "react-router"
import { CsrfField } from "../Forms.tsx"

/**
 * The profile's "Push notifications" panel: subscribe this browser (or the
 * phone it runs on) to Web Push for one of the person's organizations, list
 * the subscribed devices, remove one. The subscription itself is the
 * browser's (service worker /sw.js, `PushManager.subscribe` with the server's
 * VAPID key); the server keeps it as a `webpush` channel.
 */

interface Device {
  readonly id: string
  readonly name: string
  readonly organization: { readonly slug: string; readonly name: string }
  readonly created_at: string
  readonly canManage: boolean
}

interface Outcome {
  readonly intent: string
  readonly errors: Readonly<Record<string, string>>
  readonly subscribed?: { readonly id: string; readonly name: string; readonly organization: string }
  readonly removed?: string
}

/** The channel ids this browser subscribed, kept in the browser: the list marks them "this browser". */
const storageKey = "statusgrid.push.channels"

const storedIds = (): ReadonlyArray<string> => {
  try {
    const value = JSON.parse(window.localStorage.getItem(storageKey) ?? "[]") as unknown
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []
  } catch {
    return []
  }
}

const storeIds = (ids: ReadonlyArray<string>) => window.localStorage.setItem(storageKey, JSON.stringify(ids))

/** "Chrome on Android", "Firefox on Linux"…: the default device name. */
export const deviceNameOf = (userAgent: string): string => {
  const browser = /Edg\//.test(userAgent) ? "Edge" : /Firefox\//.test(userAgent) ? "Firefox"
    : /Chrome\/|Chromium\//.test(userAgent) ? "Chrome" : /Safari\//.test(userAgent) ? "Safari" : "Browser"
  const system = /Android/.test(userAgent) ? "Android" : /iPhone|iPad/.test(userAgent) ? "iOS"
    : /Mac OS X/.test(userAgent) ? "macOS" : /Windows/.test(userAgent) ? "Windows" : /Linux/.test(userAgent) ? "Linux" : ""
  return system === "" ? browser : `${browser} on ${system}`
}

const base64url = (bytes: ArrayBuffer | null) =>
  bytes === null ? "" : btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

type Support = "checking" | "supported" | "unsupported"

/** This browser's push subscription for `publicKey`: the existing one, or a new one (an older key's is replaced). */
const subscription = async (publicKey: string): Promise<PushSubscription> => {
  const registration = await navigator.serviceWorker.register("/sw.js")
  await navigator.serviceWorker.ready
  const existing = await registration.pushManager.getSubscription()
  if (existing !== null && base64url(existing.options.applicationServerKey) === publicKey) return existing
  if (existing !== null) await existing.unsubscribe()
  return registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: publicKey })
}

export function PushDevices(props: {
  readonly publicKey: string
  readonly organizations: ReadonlyArray<{ readonly slug: string; readonly name: string }>
  readonly readOnly: ReadonlyArray<{ readonly slug: string; readonly name: string; readonly role: string }>
  readonly devices: ReadonlyArray<Device>
}) {
  const subscribe = useFetcher<Outcome>()
  const remove = useFetcher<Outcome>()
  const [support, setSupport] = useState<Support>("checking")
  const [mine, setMine] = useState<ReadonlyArray<string>>([])
  const [deviceName, setDeviceName] = useState("")
  const [problem, setProblem] = useState<string | undefined>(undefined)
  const [asking, setAsking] = useState(false)

  useEffect(() => {
    setSupport("serviceWorker" in navigator && "PushManager" in window && "Notification" in window ? "supported" : "unsupported")
    setDeviceName(deviceNameOf(navigator.userAgent))
    setMine(storedIds())
  }, [])

  // A device subscribed: remember its channel here (the list marks it).
  const subscribed = subscribe.data?.subscribed
  useEffect(() => {
    if (subscribed === undefined) return
    const ids = [...storedIds().filter((id) => id !== subscribed.id), subscribed.id]
    storeIds(ids)
    setMine(ids)
  }, [subscribed])

  // This browser's device removed: forget it; with none left, the browser unsubscribes.
  const removed = remove.data?.removed
  useEffect(() => {
    if (removed === undefined || !storedIds().includes(removed)) return
    const ids = storedIds().filter((id) => id !== removed)
    storeIds(ids)
    setMine(ids)
    if (ids.length === 0 && "serviceWorker" in navigator) {
      void navigator.serviceWorker.getRegistration().then((r) => r?.pushManager.getSubscription()).then((s) => s?.unsubscribe())
    }
  }, [removed])

  const onSubscribe = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    setProblem(undefined)
    setAsking(true)
    try {
      const permission = await Notification.requestPermission()
      if (permission !== "granted") {
        setProblem("Notifications are blocked for this site. Allow them in the browser's site settings, then subscribe again.")
        return
      }
      const json = (await subscription(props.publicKey)).toJSON()
      form.set("endpoint", json.endpoint ?? "")
      form.set("p256dh", json.keys?.["p256dh"] ?? "")
      form.set("auth", json.keys?.["auth"] ?? "")
      await subscribe.submit(form, { method: "post" })
    } catch (error) {
      setProblem(`This browser could not subscribe: ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      setAsking(false)
    }
  }

  const errors = subscribe.data?.errors ?? {}
  const busy = asking || subscribe.state !== "idle"
  return (
    <section className="panel" aria-labelledby="push-title">
      <h2 id="push-title">Push notifications</h2>
      <p className="muted">
        Alerts on this computer or phone, even with statusgrid closed. A subscribed device is a notification channel of the
        organization: add it to a rule to receive that rule's alerts. On a phone, add statusgrid to the home screen first (iOS
        asks for it).
      </p>
      {props.devices.length === 0
        ? <p>No device is subscribed.</p>
        : (
          <table className="team-table">
            <caption className="visually-hidden">Subscribed devices</caption>
            <thead>
              <tr><th scope="col">Device</th><th scope="col">Organization</th><th scope="col">Subscribed</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {props.devices.map((d) => (
                <tr key={d.id}>
                  <td>
                    <Link to={`/settings/${d.organization.slug}/channels/${d.id}`}>{d.name}</Link>
                    {mine.includes(d.id) ? <span className="badge"> this browser</span> : null}
                  </td>
                  <td>{d.organization.name}</td>
                  <td>{d.created_at.slice(0, 10)}</td>
                  <td>
                    {d.canManage
                      ? (
                        <remove.Form method="post">
                          <CsrfField />
                          <input type="hidden" name="intent" value="push-remove" />
                          <input type="hidden" name="organization" value={d.organization.slug} />
                          <input type="hidden" name="id" value={d.id} />
                          <button type="submit" className="button secondary small" aria-label={`Remove ${d.name}`}>Remove</button>
                        </remove.Form>
                      )
                      : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      {remove.data?.errors["form"] ? <p className="form-error" role="alert">{remove.data.errors["form"]}</p> : null}
      {props.readOnly.length > 0
        ? (
          <p className="muted">
            {props.readOnly.map((o) => `${o.name} (${o.role})`).join(", ")}: your role there does not manage notifications; an Admin or
            Member can subscribe devices.
          </p>
        )
        : null}
      {subscribed ? <p className="notice" role="status">Subscribed {subscribed.name} to {subscribed.organization}'s alerts.</p> : null}
      {props.organizations.length === 0
        ? null
        : support === "unsupported"
        ? <p className="form-error" role="alert">This browser cannot receive push notifications.</p>
        : (
          <form method="post" onSubmit={(e) => void onSubscribe(e)} noValidate className="inline-form">
            <CsrfField />
            <input type="hidden" name="intent" value="push-subscribe" />
            <div className="field">
              <label htmlFor="push-organization">Organization</label>
              <select id="push-organization" name="organization" defaultValue={props.organizations[0]?.slug}>
                {props.organizations.map((o) => <option key={o.slug} value={o.slug}>{o.name}</option>)}
              </select>
              {errors["organization"] ? <p className="field-error">Organization {errors["organization"]}</p> : null}
            </div>
            <div className="field">
              <label htmlFor="push-name">Device name</label>
              <input
                id="push-name"
                name="name"
                value={deviceName}
                onChange={(e) => setDeviceName(e.target.value)}
                aria-invalid={errors["name"] ? true : undefined}
                aria-describedby={errors["name"] ? "push-name-error" : undefined}
              />
              {errors["name"] ? <p className="field-error" id="push-name-error">Device name {errors["name"]}</p> : null}
            </div>
            {problem ? <p className="form-error" role="alert">{problem}</p> : null}
            {errors["form"] ? <p className="form-error" role="alert">{errors["form"]}</p> : null}
            <div className="field">
              <button type="submit" className="button" disabled={support !== "supported" || busy}>
                {busy ? "Subscribing…" : "Subscribe this browser"}
              </button>
            </div>
          </form>
        )}
    </section>
  )
}
