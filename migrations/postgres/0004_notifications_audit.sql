-- Notification channels, rules, the delivery outbox, and the audit log.

CREATE TABLE channels (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- team chat = slack, community chat = discord, enterprise chat = teams, on-call = pagerduty.
  type text NOT NULL CHECK (type IN ('email', 'slack', 'discord', 'teams', 'sms', 'webhook', 'pagerduty')),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  -- Non-secret settings, validated by the application per channel type.
  settings jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(settings) = 'object'),
  -- Encrypted secrets (webhook URLs with tokens, signing secret, SMS auth token); never returned by the API.
  secrets bytea,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX channels_org_idx ON channels (organization_id);

CREATE TABLE notification_rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  active boolean NOT NULL DEFAULT true,
  triggers text[] NOT NULL CHECK (
    cardinality(triggers) > 0 AND triggers <@ ARRAY[
      'component.critical', 'component.degraded', 'component.recovered', 'component.maintenance',
      'monitor.down', 'monitor.degraded', 'monitor.recovered', 'monitor.ssl_expiring',
      'incident.created', 'incident.updated', 'incident.resolved'
    ]::text[]
  ),
  -- 'all': every stack, component and monitor of the organization; 'specific': those in rule_scope_items.
  scope text NOT NULL DEFAULT 'all' CHECK (scope IN ('all', 'specific')),
  -- Empty: every level. Levels: critical, degraded, info.
  alert_levels text[] NOT NULL DEFAULT '{}' CHECK (alert_levels <@ ARRAY['critical', 'degraded', 'info']::text[]),
  -- {timezone, days, start, end, holidays, critical_always}; validated by the application.
  schedule jsonb CHECK (schedule IS NULL OR jsonb_typeof(schedule) = 'object'),
  group_window_s integer CHECK (group_window_s BETWEEN 1 AND 86400),
  cooldown_s integer NOT NULL DEFAULT 900 CHECK (cooldown_s >= 0),
  -- [{delay_s, channel_ids}] ordered steps; stopped by an acknowledgment.
  escalation jsonb CHECK (escalation IS NULL OR jsonb_typeof(escalation) = 'array'),
  template jsonb CHECK (template IS NULL OR jsonb_typeof(template) = 'object'),
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notification_rules_org_idx ON notification_rules (organization_id) WHERE active;

CREATE TABLE rule_scope_items (
  rule_id uuid NOT NULL REFERENCES notification_rules (id) ON DELETE CASCADE,
  stack_id uuid REFERENCES stacks (id) ON DELETE CASCADE,
  component_id uuid REFERENCES components (id) ON DELETE CASCADE,
  monitor_id uuid REFERENCES monitors (id) ON DELETE CASCADE,
  CHECK (num_nonnulls(stack_id, component_id, monitor_id) = 1)
);
CREATE UNIQUE INDEX rule_scope_items_key
  ON rule_scope_items (rule_id, coalesce(stack_id, component_id, monitor_id));

CREATE TABLE rule_channels (
  rule_id uuid NOT NULL REFERENCES notification_rules (id) ON DELETE CASCADE,
  channel_id uuid NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  PRIMARY KEY (rule_id, channel_id)
);
CREATE INDEX rule_channels_channel_idx ON rule_channels (channel_id);

-- The outbox: a row per message to send, written in the transaction that decides to notify.
CREATE TABLE deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  rule_id uuid REFERENCES notification_rules (id) ON DELETE SET NULL,
  channel_id uuid NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  -- Id of the bus event that caused it (NULL for test notifications).
  event_id text,
  event_type text NOT NULL,
  -- Same key for the same (event, destination): a second insert is a duplicate and is refused.
  idempotency_key text NOT NULL UNIQUE,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'delivered', 'failed', 'cancelled')),
  payload jsonb NOT NULL,
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  acknowledged_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
);
CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE status IN ('pending', 'sending');
CREATE INDEX deliveries_org_time_idx ON deliveries (organization_id, created_at DESC);

CREATE TABLE delivery_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempted_at timestamptz NOT NULL DEFAULT now(),
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  http_status integer CHECK (http_status BETWEEN 100 AND 599),
  error text
);
CREATE INDEX delivery_attempts_delivery_idx ON delivery_attempts (delivery_id, attempted_at);

-- Every change an organization makes: who, what, which record, before and after, when, from where.
CREATE TABLE audit_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  actor_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  actor_api_key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL,
  action text NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
  entity_type text NOT NULL,
  entity_id text,
  before jsonb,
  after jsonb,
  ip inet,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_org_time_idx ON audit_log (organization_id, created_at DESC, id DESC);
