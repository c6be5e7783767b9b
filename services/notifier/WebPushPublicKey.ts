import { Context, Effect, Layer } from "effect"
import { vapidConfig } from "./channels/webpush.ts"

/**
 * The server's VAPID public key (base64url, uncompressed P-256): the
 * `applicationServerKey` a browser subscribes with on the profile page. Read
 * from the same configuration as the Web Push sender (`VAPID_PUBLIC_KEY`, or
 * the pair kept in `DATA_DIR/vapid.json`), so subscriptions made in the
 * portal are signed for by the sender. The private key stays in the notifier.
 */
export class WebPushPublicKey extends Context.Service<WebPushPublicKey, string>()("statusgrid/notifier/WebPushPublicKey") {
  static readonly layer = Layer.effect(WebPushPublicKey, vapidConfig.pipe(Effect.map((keys) => keys.publicKey), Effect.orDie))
}
