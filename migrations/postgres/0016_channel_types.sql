-- Channel types are the application's registry (services/domain/Channel.ts, channelKinds), checked by its Schema
-- on every write: the CHECK that repeated the list goes, so a new channel type needs no migration for it.
ALTER TABLE channels DROP CONSTRAINT IF EXISTS channels_type_check;

-- Web Push (mobile push): on the plans with every channel (the spec's Pro and Enterprise); Free stays e-mail only.
UPDATE plans SET channel_types = array_append(channel_types, 'webpush')
WHERE id IN ('pro', 'enterprise') AND NOT ('webpush' = ANY (channel_types));
