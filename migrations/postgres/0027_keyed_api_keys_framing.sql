-- Issue #19, API keys as keyed hashes: `key_hash` becomes HMAC-SHA-256 of the key under a key derived
-- (HKDF) from the installation's secrets key (services/orgs/ApiKeys.ts, decision 0018), so a copy of
-- the database without SECRETS_KEY cannot test a guessed key. Keys made before keep their plain
-- SHA-256 (`hash_scheme = 'sha256'`, the default, so every existing row says so) until their next
-- use, which re-hashes them: the key itself is never stored, so nothing can re-hash them sooner.
-- `hash_key_id` names the secrets key a keyed hash was made under (its 4-byte id in hex,
-- services/platform/SecretBox.ts): the rows still under SECRETS_KEY_PREVIOUS can be counted before
-- that key is dropped.
ALTER TABLE api_keys
  ADD COLUMN hash_scheme text NOT NULL DEFAULT 'sha256' CHECK (hash_scheme IN ('sha256', 'hmac-sha256')),
  ADD COLUMN hash_key_id text CHECK (hash_key_id ~ '^[0-9a-f]{8}$'),
  ADD CONSTRAINT api_keys_keyed_hash_check CHECK ((hash_scheme = 'hmac-sha256') = (hash_key_id IS NOT NULL));

-- Issue #19, framing: the origins allowed to frame the organization's TV links and public share pages
-- (their CSP `frame-ancestors`; services/api/SecurityHeaders.ts). Empty, the default: framed nowhere.
-- The application checks each (services/domain/Organization.ts, `FrameAncestors`); the database keeps
-- anything else out of a header too: at most 10, each an https origin or http on this machine.
ALTER TABLE organizations
  ADD COLUMN frame_ancestors text[] NOT NULL DEFAULT '{}'
    CHECK (
      cardinality(frame_ancestors) <= 10
      AND array_to_string(frame_ancestors, ' ')
        ~ '^((https://[a-z0-9.-]+|http://(localhost|127\.0\.0\.1))(:[0-9]{1,5})?( |$))*$'
    );
