-- Website monitors, stacks and organization maintenance windows.

CREATE TABLE monitors (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  url text NOT NULL CHECK (url ~* '^https?://[^\s/]+'),
  check_type text NOT NULL DEFAULT 'https' CHECK (check_type IN ('http', 'https')),
  method text NOT NULL DEFAULT 'GET' CHECK (method IN ('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS')),
  interval_s integer NOT NULL DEFAULT 60 CHECK (interval_s BETWEEN 10 AND 86400),
  alert_threshold integer NOT NULL DEFAULT 3 CHECK (alert_threshold BETWEEN 1 AND 100),
  timeout_ms integer NOT NULL DEFAULT 10000 CHECK (timeout_ms BETWEEN 100 AND 120000),
  -- As entered ("200-299", "200,301", "2xx"); validated by the application.
  expected_status text NOT NULL DEFAULT '200-299',
  headers jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(headers) = 'object'),
  auth_type text NOT NULL DEFAULT 'none' CHECK (auth_type IN ('none', 'basic', 'bearer')),
  -- Encrypted credentials (AES-GCM with the operator's key); never returned by the API.
  auth_secret bytea,
  body text,
  keyword text,
  keyword_mode text NOT NULL DEFAULT 'contains' CHECK (keyword_mode IN ('contains', 'absent')),
  degraded_after_ms integer CHECK (degraded_after_ms > 0),
  ssl_expiry_days integer[] NOT NULL DEFAULT '{30,14,7,1}',
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'up', 'degraded', 'down', 'paused')),
  consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
  last_checked_at timestamptz,
  last_changed_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (timeout_ms <= interval_s * 1000),
  CHECK ((auth_type = 'none') = (auth_secret IS NULL))
);
CREATE INDEX monitors_org_idx ON monitors (organization_id);

CREATE TABLE stacks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  slug text NOT NULL CHECK (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$'),
  description text NOT NULL DEFAULT '',
  team text NOT NULL DEFAULT '',
  visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('public', 'private')),
  -- Unguessable token of the public share link; NULL while private.
  share_token text UNIQUE,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, slug),
  CHECK (visibility = 'public' OR share_token IS NULL)
);

-- What a stack shows: a catalog or custom source's component, a whole source, or a monitor.
CREATE TABLE stack_items (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('component', 'source', 'monitor')),
  component_id uuid REFERENCES components (id) ON DELETE CASCADE,
  source_id uuid REFERENCES sources (id) ON DELETE CASCADE,
  monitor_id uuid REFERENCES monitors (id) ON DELETE CASCADE,
  position integer NOT NULL DEFAULT 0,
  added_at timestamptz NOT NULL DEFAULT now(),
  CHECK (num_nonnulls(component_id, source_id, monitor_id) = 1),
  CHECK (
    (kind = 'component' AND component_id IS NOT NULL) OR
    (kind = 'source' AND source_id IS NOT NULL) OR
    (kind = 'monitor' AND monitor_id IS NOT NULL)
  )
);
CREATE UNIQUE INDEX stack_items_component_key ON stack_items (stack_id, component_id) WHERE component_id IS NOT NULL;
CREATE UNIQUE INDEX stack_items_source_key ON stack_items (stack_id, source_id) WHERE source_id IS NOT NULL;
CREATE UNIQUE INDEX stack_items_monitor_key ON stack_items (stack_id, monitor_id) WHERE monitor_id IS NOT NULL;
CREATE INDEX stack_items_component_idx ON stack_items (component_id) WHERE component_id IS NOT NULL;
CREATE INDEX stack_items_monitor_idx ON stack_items (monitor_id) WHERE monitor_id IS NOT NULL;

-- An organization's own maintenance windows: alerts in scope are held while one is active.
CREATE TABLE maintenance_windows (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  title text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 200),
  description text NOT NULL DEFAULT '',
  -- NULL: the whole organization.
  stack_id uuid REFERENCES stacks (id) ON DELETE CASCADE,
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (ends_at > starts_at)
);
CREATE INDEX maintenance_windows_org_time_idx ON maintenance_windows (organization_id, starts_at, ends_at);
