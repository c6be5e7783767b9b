import { Result } from "effect"
import type { DiscordSettings } from "../../domain/Channel.ts"
import type { Message, Sender } from "../Sender.ts"
import { postJson } from "./http.ts"
import type { HttpOptions } from "./http.ts"
import { settingsOf } from "./settings.ts"
import { clip } from "./text.ts"

/** Discord webhook: one embed in the channel's colour, role mentions that only ping the roles configured. */

/** Discord's embed limits: title 256, description 4,096, field value 1,024. */
const titleMax = 256
const descriptionMax = 4096
const fieldMax = 1024

/** `#5865f2` → 0x5865f2, Discord's integer colour. */
export const colorInt = (hex: string): number => Number.parseInt(hex.slice(1), 16)

/** Role ids as given, or `<@&id>` / `@&id` forms reduced to the id. */
const roleId = (role: string): string => role.replace(/^<?@&/, "").replace(/>$/, "")

export const discordBody = (settings: typeof DiscordSettings.Type, message: Message): Record<string, unknown> => {
  const roles = settings.mention_roles.map(roleId)
  const { component, stack } = message.payload
  const fields = [
    { name: "Component", value: component.name, inline: true },
    { name: "Stack", value: stack.name, inline: true },
    {
      name: "Status",
      value: component.previous_status === "" ? component.current_status : `${component.previous_status} → ${component.current_status}`,
      inline: true
    }
  ].filter((f) => f.value !== "").map((f) => ({ ...f, value: clip(f.value, fieldMax) }))
  return {
    // Discord rejects an empty content string; a message of only an embed has none.
    ...(roles.length === 0 ? {} : { content: roles.map((id) => `<@&${id}>`).join(" ") }),
    embeds: [{
      title: clip(message.title, titleMax),
      description: clip(message.text, descriptionMax),
      url: message.url,
      color: colorInt(settings.embed_color),
      timestamp: message.payload.timestamp,
      fields
    }],
    // Only the configured roles may ping: an @everyone in a component name stays text.
    allowed_mentions: { parse: [], roles }
  }
}

export const makeDiscordSender = (options: HttpOptions = {}): Sender => (destination, message, context) => {
  const settings = settingsOf("discord", destination)
  if (Result.isFailure(settings)) return Promise.resolve(settings.failure)
  return postJson(settings.success.webhook_url, discordBody(settings.success, message), context, options)
}
