-- Portal sign-in sessions (services/identity/Sessions.ts). The cookie holds a random
-- token; the row is keyed by its SHA-256, so a read of this table cannot be replayed.

CREATE TABLE sessions (
  -- SHA-256 (hex) of the session token.
  id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The organization chosen after sign-in; NULL until one is chosen.
  organization_id uuid REFERENCES organizations (id) ON DELETE SET NULL,
  -- Sent back by the portal's forms and compared with this (synchronizer token).
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Absolute end of the session, whatever its activity.
  expires_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  CHECK (expires_at > created_at)
);
CREATE INDEX sessions_user_idx ON sessions (user_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);
