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
  { path: "plan", label: "Plan and usage", needs: "view" },
  // monitors + custom sources
  { path: "monitors", label: "Website monitors", needs: "view" },
  { path: "sources", label: "Custom sources", needs: "view" }
  // end monitors + custom sources
  // end sections
]
