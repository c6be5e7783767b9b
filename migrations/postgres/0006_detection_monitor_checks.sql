-- Provider detection by the poller, and what website-monitor checks need.

-- The document the poller reads when detection found it somewhere other than
-- the status page itself (a feed found by <link rel="alternate">, say).
-- NULL: read status_page_url.
ALTER TABLE sources ADD COLUMN poll_url text CHECK (poll_url ~* '^https?://');

-- Follow up to 5 redirects (3xx answers are otherwise judged against expected_status).
ALTER TABLE monitors ADD COLUMN follow_redirects boolean NOT NULL DEFAULT true;
-- Refuse invalid certificates (self-signed, expired, wrong host) as a failed check.
ALTER TABLE monitors ADD COLUMN tls_verify boolean NOT NULL DEFAULT true;
-- The smallest SSL-expiry threshold (days) already announced for the current certificate; NULL: none.
ALTER TABLE monitors ADD COLUMN ssl_notified_days integer;
ALTER TABLE monitors ADD COLUMN last_response_ms integer;
ALTER TABLE monitors ADD COLUMN last_http_status integer;
ALTER TABLE monitors ADD COLUMN tls_valid_to timestamptz;
ALTER TABLE monitors ADD COLUMN tls_issuer text;
