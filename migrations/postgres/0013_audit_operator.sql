-- Changes made by the installation's operator (the `statusgrid org ...` commands, e.g. a plan change), not
-- by a member or an API key of the organization: who ran the command (OS user @ host), shown as
-- actor { kind: "operator", id }.
ALTER TABLE audit_log ADD COLUMN actor_operator text CHECK (actor_operator IS NULL OR length(actor_operator) BETWEEN 1 AND 200);
