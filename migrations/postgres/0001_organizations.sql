-- Organizations, plans, users, memberships, invitations, API keys.
-- Enumerations are text with CHECK constraints (not PostgreSQL enums) so that a
-- later migration can widen one with a single ALTER inside a transaction.

CREATE TABLE plans (
  id text PRIMARY KEY CHECK (id IN ('free', 'pro', 'enterprise')),
  name text NOT NULL,
  -- NULL means unlimited.
  max_stacks integer CHECK (max_stacks >= 0),
  max_components integer CHECK (max_components >= 0),
  max_monitors integer CHECK (max_monitors >= 0),
  max_users integer CHECK (max_users >= 0),
  max_rules integer CHECK (max_rules >= 0),
  max_channels_per_rule integer CHECK (max_channels_per_rule >= 0),
  max_custom_sources integer CHECK (max_custom_sources >= 0),
  sms_per_month integer CHECK (sms_per_month >= 0),
  channel_types text[] NOT NULL,
  features text[] NOT NULL DEFAULT '{}'
);

-- The spec's plan table (Limits). sms_per_month 0 = not available; Enterprise SMS is custom (NULL).
INSERT INTO plans (id, name, max_stacks, max_components, max_monitors, max_users, max_rules,
                   max_channels_per_rule, max_custom_sources, sms_per_month, channel_types, features)
VALUES
  ('free', 'Free', 1, 10, 1, 1, 3, 2, 10, 0, '{email}', '{}'),
  ('pro', 'Pro', NULL, NULL, NULL, NULL, 25, NULL, 10, 100,
   '{email,slack,discord,teams,sms,webhook,pagerduty}', '{scheduled_reports,tv_dashboard}'),
  ('enterprise', 'Enterprise', NULL, NULL, NULL, NULL, NULL, NULL, 10, NULL,
   '{email,slack,discord,teams,sms,webhook,pagerduty}',
   '{scheduled_reports,tv_dashboard,msp,white_label,custom_domains,saml_sso,priority_support,escalation,custom_templates,deduplication}');

CREATE TABLE organizations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$'),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  plan_id text NOT NULL DEFAULT 'free' REFERENCES plans (id),
  -- Enterprise may be granted more custom sources than the plan default.
  custom_sources_limit integer CHECK (custom_sources_limit >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' AND length(email) <= 320),
  name text NOT NULL DEFAULT '',
  -- NULL for users who only sign in through an identity provider.
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_login_at timestamptz
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

-- Sign-in through OpenID Connect providers (Google-type, Microsoft-type).
CREATE TABLE user_identities (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  provider text NOT NULL CHECK (provider ~ '^[a-z0-9_-]+$'),
  subject text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, subject)
);
CREATE INDEX user_identities_user_idx ON user_identities (user_id);

CREATE TABLE memberships (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE invitations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  role text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
  -- SHA-256 of the token sent by e-mail; the token itself is never stored.
  token_hash text NOT NULL UNIQUE,
  invited_by uuid REFERENCES users (id) ON DELETE SET NULL,
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (expires_at > created_at)
);
-- At most one open invitation per address and organization.
CREATE UNIQUE INDEX invitations_open_key ON invitations (organization_id, lower(email))
  WHERE accepted_at IS NULL AND revoked_at IS NULL;

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  role text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
  -- First characters of the key, shown in lists to tell keys apart.
  prefix text NOT NULL,
  -- SHA-256 of the whole key; the key is shown once and never stored.
  key_hash text NOT NULL UNIQUE,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_org_idx ON api_keys (organization_id);
