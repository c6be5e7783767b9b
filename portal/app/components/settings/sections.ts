import type { Permission } from "#services/domain/Permissions.ts"

/**
 * The settings sections in the side navigation, in order: its path under
 * `/settings/<org>/`, its label, and the permission needed to see it (every
 * role may view all but the audit log). Add a page: a line here, its routes
 * in routes.ts (inside the settings layout) and its files under routes/settings/.
 */
export interface SettingsSection {
  readonly path: string
  readonly label: string
  readonly needs: Permission
}

export const settingsSections: ReadonlyArray<SettingsSection> = [
  // sections: one line each, in the order of the navigation
  { path: "stacks", label: "Stacks", needs: "view" },
  { path: "monitors", label: "Website monitors", needs: "view" },
  { path: "sources", label: "Custom sources", needs: "view" },
  { path: "maintenance", label: "Maintenance calendar", needs: "view" },
  { path: "rules", label: "Rules", needs: "view" },
  { path: "channels", label: "Channels", needs: "view" },
  { path: "notifications", label: "Notification center", needs: "view" },
  { path: "tv", label: "TV links", needs: "view" },
  { path: "reports", label: "Reports", needs: "view" },
  { path: "team", label: "Team", needs: "view" },
  { path: "api-keys", label: "API keys", needs: "members.manage" },
  { path: "audit", label: "Audit log", needs: "audit.view" },
  { path: "plan", label: "Plan and usage", needs: "view" }
  // end sections
]
