-- The notification engine's state (services/notifier/README.md, "Rules engine").

-- One alert: a rule's decision to notify about one subject, or about a stack's
-- changes grouped in a window; its deliveries, escalation and acknowledgment.
CREATE TABLE alerts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  rule_id uuid REFERENCES notification_rules (id) ON DELETE SET NULL,
  -- The trigger (component.critical, monitor.down, incident.created, ...) or 'group'.
  trigger text NOT NULL,
  -- component:<uuid>, monitor:<uuid>, incident:<source key>:<incident id>, stack:<uuid> (a group).
  subject text NOT NULL,
  level text NOT NULL CHECK (level IN ('critical', 'degraded', 'info')),
  -- The webhook payload and the words for people, as sent to every channel of the alert.
  payload jsonb NOT NULL,
  message jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  acknowledged_at timestamptz,
  -- user:<id>, api_key:<id>, link (the signed link), recovered (the subject recovered).
  acknowledged_by text,
  -- Escalation steps already sent; the next one is due at next_escalation_at (NULL: none left).
  escalation_step integer NOT NULL DEFAULT 0 CHECK (escalation_step >= 0),
  next_escalation_at timestamptz,
  -- The short link /a/<code> (SMS) that redirects to the alert's page.
  short_code text NOT NULL UNIQUE CHECK (short_code ~ '^[A-Za-z0-9_-]{8,16}$'),
  CHECK (acknowledged_at IS NULL OR next_escalation_at IS NULL)
);
CREATE INDEX alerts_escalation_due_idx ON alerts (next_escalation_at) WHERE next_escalation_at IS NOT NULL;
CREATE INDEX alerts_org_time_idx ON alerts (organization_id, created_at DESC);
CREATE INDEX alerts_open_subject_idx ON alerts (organization_id, subject) WHERE next_escalation_at IS NOT NULL;

-- Per rule and subject, the last status alerted and when: the cooldown
-- (one alert per 15 minutes by default unless the status changes again).
CREATE TABLE rule_subject_state (
  rule_id uuid NOT NULL REFERENCES notification_rules (id) ON DELETE CASCADE,
  subject text NOT NULL,
  last_status text NOT NULL,
  last_alert_at timestamptz NOT NULL,
  PRIMARY KEY (rule_id, subject)
);

-- Open grouping windows: a rule's alerts about one stack, collected until flush_at, then sent as one.
CREATE TABLE alert_groups (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  rule_id uuid NOT NULL REFERENCES notification_rules (id) ON DELETE CASCADE,
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  opened_at timestamptz NOT NULL DEFAULT now(),
  flush_at timestamptz NOT NULL,
  -- [{event_id, trigger, level, subject, payload, message}] in arrival order.
  items jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(items) = 'array'),
  flushed_at timestamptz
);
CREATE UNIQUE INDEX alert_groups_open_key ON alert_groups (rule_id, stack_id) WHERE flushed_at IS NULL;
CREATE INDEX alert_groups_due_idx ON alert_groups (flush_at) WHERE flushed_at IS NULL;

ALTER TABLE deliveries
  ADD COLUMN alert_id uuid REFERENCES alerts (id) ON DELETE SET NULL,
  -- The words for people ({event, title, text, url, level, vars}); NULL: derived from the payload (test sends).
  ADD COLUMN message jsonb,
  -- Order of writing. A channel receives the deliveries of one order key (the alert's subject; '' for
  -- test sends) in this order, so a resolve never overtakes its trigger; different subjects go in parallel.
  ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY,
  ADD COLUMN order_key text NOT NULL DEFAULT '',
  -- A delivery of an alert sends the alert's payload and message (stored once, with the alert) unless it has its own.
  ALTER COLUMN payload DROP NOT NULL,
  ADD CONSTRAINT deliveries_payload_or_alert CHECK (payload IS NOT NULL OR alert_id IS NOT NULL),
  -- Slack through a bot token: the ts of the thread the message started or replied in.
  ADD COLUMN thread_ref text;
CREATE INDEX deliveries_alert_idx ON deliveries (alert_id) WHERE alert_id IS NOT NULL;
CREATE INDEX deliveries_order_open_idx ON deliveries (channel_id, order_key, seq) WHERE status IN ('pending', 'sending');
CREATE INDEX deliveries_thread_idx ON deliveries (channel_id, order_key, seq) WHERE thread_ref IS NOT NULL;
