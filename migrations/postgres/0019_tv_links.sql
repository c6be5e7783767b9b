-- TV links: a wall screen's view of some of an organization's stacks, rotated every rotation_s seconds,
-- opened at /tv/<token> without signing in (the token is the credential). A Pro-plan feature
-- (plans.features 'tv_dashboard'), checked when a link is created and each time it is opened.
CREATE TABLE tv_links (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  -- "tv_" and 32 base64url characters (24 random bytes); never a slug (slugs have no "_").
  token text NOT NULL UNIQUE CHECK (token ~ '^tv_[A-Za-z0-9_-]{32}$'),
  rotation_s integer NOT NULL CHECK (rotation_s BETWEEN 2 AND 3600),
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- A revoked link answers 404 at once; the row stays for the audit trail.
  revoked_at timestamptz
);
CREATE INDEX tv_links_organization_idx ON tv_links (organization_id, created_at);

-- The stacks a link rotates through, in order; a deleted stack leaves the rotation.
CREATE TABLE tv_link_stacks (
  tv_link_id uuid NOT NULL REFERENCES tv_links (id) ON DELETE CASCADE,
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  position integer NOT NULL CHECK (position >= 0),
  PRIMARY KEY (tv_link_id, stack_id)
);
CREATE INDEX tv_link_stacks_stack_idx ON tv_link_stacks (stack_id);
