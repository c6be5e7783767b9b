-- The e-mail of each invitation, sent by the notifier's mail worker through the operator's SMTP server.
CREATE TABLE invitation_mails (
  invitation_id uuid PRIMARY KEY REFERENCES invitations (id) ON DELETE CASCADE,
  -- The mail (it holds the link's token, which is otherwise stored only as a hash), encrypted with the
  -- secrets key; cleared once the mail is sent or given up.
  sealed bytea,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  CHECK ((status IN ('sent', 'failed')) = (sealed IS NULL))
);
CREATE INDEX invitation_mails_due_idx ON invitation_mails (next_attempt_at) WHERE status IN ('pending', 'sending');
