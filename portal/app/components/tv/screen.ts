import type { Banner, Shown } from "#services/domain/StatusWords.ts"

/**
 * What a TV screen or a share page shows, as sent to the browser: the stacks'
 * names, banners and items with their shown status, and their sources'
 * incidents. Nothing else of the organization (no ids of it, no tokens, no
 * settings): a share page is public.
 */
export interface ScreenItem {
  readonly key: string
  readonly name: string
  /** What it belongs to: the source's name or key, "Website monitor". */
  readonly group: string
  readonly shown: Shown
}

export interface ScreenStack {
  readonly slug: string
  readonly name: string
  readonly description: string
  readonly banner: Banner
  /** Items not checked yet (a monitor pending or paused): they do not move the banner. */
  readonly unknown: number
  readonly items: ReadonlyArray<ScreenItem>
}

export interface ScreenIncident {
  readonly id: string
  readonly title: string
  readonly status: string
  readonly impact: string
  readonly source: string
  readonly updated_at: string
  readonly resolved_at: string | null
  readonly latest_update: string | null
}

export interface ScreenData {
  readonly title: string
  readonly rotation_s: number
  readonly stacks: ReadonlyArray<ScreenStack>
  readonly incidents: ReadonlyArray<ScreenIncident>
  /** When the server read this state (ISO). */
  readonly read_at: string
}

/** Where the browser reads the screen's state again and its live stream. */
export interface ScreenLinks {
  readonly state: string
  readonly stream: string
}
