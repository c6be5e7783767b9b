/** The record types the services write to the audit log (`entity_type`), for the filter. */
export const recordTypes = [
  "alert", "api_key", "calendar_feed", "channel", "custom_source", "invitation", "maintenance_window", "member", "monitor",
  "notification_rule", "organization", "stack", "stack_item", "tv_link"
] as const
