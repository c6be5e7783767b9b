-- Scheduled reports (issue "Analytics and reports"; Pro and Enterprise): an organization's schedules,
-- and one row per schedule and period, generated and e-mailed by the report worker.
CREATE TABLE report_schedules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  frequency text NOT NULL CHECK (frequency IN ('weekly', 'monthly')),
  -- An IANA zone: periods start at local midnight (checked by the service; PostgreSQL knows the same names).
  time_zone text NOT NULL DEFAULT 'UTC',
  recipients text[] NOT NULL CHECK (cardinality(recipients) BETWEEN 1 AND 50),
  -- The stacks it covers; empty: every stack of the organization at generation time.
  stack_ids uuid[] NOT NULL DEFAULT '{}',
  -- The organization's uptime target, percent.
  sla_target numeric(7, 4) NOT NULL DEFAULT 99.9 CHECK (sla_target > 0 AND sla_target <= 100),
  enabled boolean NOT NULL DEFAULT true,
  -- Whose view the report is generated with (a viewer's access to the organization's stacks).
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX report_schedules_org_idx ON report_schedules (organization_id);

-- One report per schedule and period: the unique key is what makes it once per period, however
-- many processes run the worker (each inserts the periods due with ON CONFLICT DO NOTHING, and
-- claims rows with FOR UPDATE SKIP LOCKED and a lease, as the outbox does).
CREATE TABLE reports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  schedule_id uuid NOT NULL REFERENCES report_schedules (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL CHECK (period_end > period_start),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
  -- The figures (services/domain/Report.ts), stored once generated: every later download says the same.
  content jsonb,
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  generated_at timestamptz,
  sent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (schedule_id, period_start)
);
CREATE INDEX reports_due_idx ON reports (next_attempt_at) WHERE status IN ('pending', 'sending');
CREATE INDEX reports_org_idx ON reports (organization_id, period_start DESC);
