-- Website-monitor checks: the phases of the request and the certificate's remaining days.
-- Source checks leave them at their defaults.
ALTER TABLE check_results
  ADD COLUMN IF NOT EXISTS dns_ms Float32 DEFAULT 0,
  ADD COLUMN IF NOT EXISTS connect_ms Float32 DEFAULT 0,
  ADD COLUMN IF NOT EXISTS tls_ms Float32 DEFAULT 0,
  ADD COLUMN IF NOT EXISTS first_byte_ms Float32 DEFAULT 0,
  ADD COLUMN IF NOT EXISTS tls_days_left Nullable(Int32) DEFAULT NULL;
