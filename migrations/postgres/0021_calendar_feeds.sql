-- The maintenance calendar's iCal subscription: one secret feed URL per organization,
-- /calendar/<token>.ics, opened by calendar clients without signing in (the token is the
-- credential). Creating a new one replaces the old token (the old URL answers 404 at once);
-- revoking deletes it.
CREATE TABLE calendar_feeds (
  organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  -- "cal_" and 32 base64url characters (24 random bytes).
  token text NOT NULL UNIQUE CHECK (token ~ '^cal_[A-Za-z0-9_-]{32}$'),
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A window's iCal SEQUENCE and LAST-MODIFIED: each change bumps the revision, so that calendar
-- clients replace the event they hold under the same UID instead of adding a second one.
ALTER TABLE maintenance_windows
  ADD COLUMN revision integer NOT NULL DEFAULT 0,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
