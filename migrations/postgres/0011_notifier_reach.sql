-- Issue 12, notifier (services/notifier/README.md, decision 0008).

-- SMS messages a delivery costs (segments of its body times its numbers), reserved when it is first
-- attempted: the plan's monthly allowance counts these, checked per delivery.
ALTER TABLE deliveries ADD COLUMN sms_segments integer NOT NULL DEFAULT 0 CHECK (sms_segments >= 0);
CREATE INDEX deliveries_sms_month_idx ON deliveries (organization_id, created_at) WHERE sms_segments > 0;

-- Alerts a rule's schedule paused: sent once when the schedule next allows them (release_at),
-- unless the subject recovered meanwhile. One open row per rule and subject (the latest change).
CREATE TABLE held_alerts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  rule_id uuid NOT NULL REFERENCES notification_rules (id) ON DELETE CASCADE,
  subject text NOT NULL,
  -- When the change happened (event time) and when the schedule next lets the rule alert.
  event_at timestamptz NOT NULL,
  release_at timestamptz NOT NULL,
  -- {event_id, trigger, level, status, payload, message}: the alert as it would have been sent.
  item jsonb NOT NULL,
  held_at timestamptz NOT NULL DEFAULT now(),
  -- Set once: sent, recovered (the subject recovered before the window opened) or dropped (rule gone or paused).
  closed_at timestamptz,
  outcome text CHECK (outcome IN ('sent', 'recovered', 'dropped'))
);
CREATE UNIQUE INDEX held_alerts_open_key ON held_alerts (rule_id, subject) WHERE closed_at IS NULL;
CREATE INDEX held_alerts_due_idx ON held_alerts (release_at) WHERE closed_at IS NULL;
CREATE INDEX held_alerts_open_subject_idx ON held_alerts (subject) WHERE closed_at IS NULL;
