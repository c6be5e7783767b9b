// statusgrid's service worker (served at /sw.js, scope "/"): shows Web Push
// alerts and opens their page when one is clicked. Plain JavaScript, no build
// step; the server sends it with `Cache-Control: no-cache` so that an update
// is picked up at the next page load.
//
// A push's data is the JSON of services/notifier/channels/webpush.ts
// (`webPushMessage`): { title, body, url }.

self.addEventListener("install", () => {
  self.skipWaiting()
})

self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim())
})

/** The message of a push, or a generic one when the data is not the expected JSON. */
const messageOf = (data) => {
  try {
    const message = data ? data.json() : {}
    return {
      title: typeof message.title === "string" && message.title !== "" ? message.title : "statusgrid alert",
      body: typeof message.body === "string" ? message.body : "",
      url: typeof message.url === "string" && message.url !== "" ? message.url : "/"
    }
  } catch {
    return { title: "statusgrid alert", body: data ? data.text() : "", url: "/" }
  }
}

self.addEventListener("push", (event) => {
  const message = messageOf(event.data)
  event.waitUntil(self.registration.showNotification(message.title, {
    body: message.body,
    icon: "/icons/icon-192.png",
    badge: "/icons/icon-192.png",
    // One notification per alert page: a later push about the same alert replaces it.
    tag: message.url,
    renotify: true,
    data: { url: message.url }
  }))
})

self.addEventListener("notificationclick", (event) => {
  event.notification.close()
  const url = new URL(event.notification.data && event.notification.data.url ? event.notification.data.url : "/", self.location.origin).href
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true })
    const same = open.find((client) => client.url === url)
    if (same) return same.focus()
    return self.clients.openWindow(url)
  })())
})
