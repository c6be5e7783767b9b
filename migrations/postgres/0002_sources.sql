-- Sources (catalog and custom), their components, incidents and scheduled maintenances.

CREATE TABLE categories (
  id text PRIMARY KEY CHECK (id ~ '^[a-z0-9_]+$'),
  name text NOT NULL,
  position integer NOT NULL DEFAULT 0
);

-- The spec's six categories; the id is the value of the API's `category` parameter.
INSERT INTO categories (id, name, position) VALUES
  ('cloud', 'Cloud infrastructure', 1),
  ('payment', 'Payment processing', 2),
  ('communication', 'Communication', 3),
  ('devtools', 'Development tools', 4),
  ('monitoring', 'Monitoring and analytics', 5),
  ('cdn_dns', 'CDN and DNS', 6);

CREATE TABLE sources (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- NULL for the shared catalog; set for an organization's private custom source.
  organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  key text NOT NULL UNIQUE CHECK (key ~ '^[a-z0-9](?:[a-z0-9-]{0,126}[a-z0-9])?$'),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  description text NOT NULL DEFAULT '',
  -- catalog: shared; url: custom, read from a status page; manual: custom, status set by users.
  kind text NOT NULL CHECK (kind IN ('catalog', 'url', 'manual')),
  -- Wire value of the adapter that reads it (statuspage_io, instatus, ...); NULL until detected, and for manual sources.
  provider_type text CHECK (provider_type ~ '^[a-z0-9_]+$'),
  status text NOT NULL DEFAULT 'operational' CHECK (status IN ('operational', 'degraded', 'down', 'maintenance')),
  logo_url text,
  status_page_url text,
  service_url text,
  -- Check class sets the poll interval (spec: What the service does, 4).
  check_class text NOT NULL DEFAULT 'standard' CHECK (check_class IN ('critical', 'high', 'standard', 'low')),
  poll_interval_s integer NOT NULL DEFAULT 300 CHECK (poll_interval_s BETWEEN 10 AND 86400),
  enabled boolean NOT NULL DEFAULT true,
  -- Reliability indicators (spec: Source): verified, real-time, historical, regional.
  verified boolean NOT NULL DEFAULT false,
  has_history boolean NOT NULL DEFAULT false,
  regions text[] NOT NULL DEFAULT '{}',
  components_count integer NOT NULL DEFAULT 0 CHECK (components_count >= 0),
  incidents_count integer NOT NULL DEFAULT 0 CHECK (incidents_count >= 0),
  last_checked_at timestamptz,
  last_changed_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'catalog') = (organization_id IS NULL)),
  CHECK (kind = 'manual' OR status_page_url IS NOT NULL)
);
CREATE INDEX sources_org_idx ON sources (organization_id) WHERE organization_id IS NOT NULL;
CREATE INDEX sources_name_idx ON sources (lower(name));

CREATE TABLE source_categories (
  source_id uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  category_id text NOT NULL REFERENCES categories (id) ON DELETE CASCADE,
  PRIMARY KEY (source_id, category_id)
);
CREATE INDEX source_categories_category_idx ON source_categories (category_id, source_id);

CREATE TABLE components (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  -- The provider's own id for the component (or a stable derived one).
  external_id text NOT NULL,
  parent_id uuid REFERENCES components (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  status text NOT NULL DEFAULT 'operational' CHECK (status IN ('operational', 'degraded', 'critical', 'maintenance')),
  is_group boolean NOT NULL DEFAULT false,
  region text,
  position integer NOT NULL DEFAULT 0,
  last_changed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source_id, external_id),
  CHECK (parent_id IS NULL OR parent_id <> id)
);
CREATE INDEX components_parent_idx ON components (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE incidents (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  external_id text NOT NULL,
  title text NOT NULL,
  status text NOT NULL CHECK (status IN ('investigating', 'identified', 'monitoring', 'resolved', 'postmortem')),
  impact text NOT NULL DEFAULT 'none' CHECK (impact IN ('none', 'minor', 'major', 'critical', 'maintenance')),
  url text,
  region text,
  update_count integer NOT NULL DEFAULT 0 CHECK (update_count >= 0),
  started_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  resolved_at timestamptz,
  UNIQUE (source_id, external_id),
  CHECK (resolved_at IS NULL OR resolved_at >= started_at)
);
CREATE INDEX incidents_source_started_idx ON incidents (source_id, started_at DESC);
CREATE INDEX incidents_open_idx ON incidents (source_id) WHERE resolved_at IS NULL;

CREATE TABLE incident_components (
  incident_id uuid NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  component_id uuid NOT NULL REFERENCES components (id) ON DELETE CASCADE,
  PRIMARY KEY (incident_id, component_id)
);
CREATE INDEX incident_components_component_idx ON incident_components (component_id);

CREATE TABLE incident_updates (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  incident_id uuid NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  external_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('investigating', 'identified', 'monitoring', 'resolved', 'postmortem')),
  body text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL,
  UNIQUE (incident_id, external_id)
);

-- Maintenance announced by a source's provider.
CREATE TABLE scheduled_maintenances (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  external_id text NOT NULL,
  title text NOT NULL,
  status text NOT NULL CHECK (status IN ('scheduled', 'in_progress', 'verifying', 'completed', 'cancelled')),
  url text,
  scheduled_for timestamptz NOT NULL,
  scheduled_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source_id, external_id),
  CHECK (scheduled_until IS NULL OR scheduled_until >= scheduled_for)
);
CREATE INDEX scheduled_maintenances_window_idx ON scheduled_maintenances (scheduled_for, scheduled_until);

CREATE TABLE maintenance_components (
  maintenance_id uuid NOT NULL REFERENCES scheduled_maintenances (id) ON DELETE CASCADE,
  component_id uuid NOT NULL REFERENCES components (id) ON DELETE CASCADE,
  PRIMARY KEY (maintenance_id, component_id)
);

-- Users' reports of a problem with a source (crowdsourced detection).
CREATE TABLE crowd_reports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  component_id uuid REFERENCES components (id) ON DELETE SET NULL,
  organization_id uuid REFERENCES organizations (id) ON DELETE SET NULL,
  user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  -- Hash of the reporter (user, or network address for anonymous reports), to count each reporter once.
  reporter_hash text NOT NULL,
  symptom text NOT NULL DEFAULT 'down' CHECK (symptom IN ('down', 'slow', 'errors', 'login', 'other')),
  region text,
  comment text CHECK (length(comment) <= 1000),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX crowd_reports_source_time_idx ON crowd_reports (source_id, created_at DESC);
