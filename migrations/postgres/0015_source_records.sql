-- What the poller reads besides status and components: per-region status, and the indexes that serve a
-- source's incidents and maintenances (GET /sources/{key}/incidents, /maintenances).

-- Each region's status as the last stored snapshot reported it (AWS, GCP, Azure), ordered by region:
-- [{"region": "us-east-1", "status": "degraded"}, ...]; empty for providers without regions.
ALTER TABLE sources ADD COLUMN region_statuses jsonb NOT NULL DEFAULT '[]'::jsonb
  CHECK (jsonb_typeof(region_statuses) = 'array');

CREATE INDEX scheduled_maintenances_source_idx ON scheduled_maintenances (source_id, scheduled_for DESC, id DESC);
-- Deleting a component cascades here; without an index each deletion would scan the table.
CREATE INDEX maintenance_components_component_idx ON maintenance_components (component_id);

-- Reliability flags of existing rows, as the poller now sets them when it stores a snapshot
-- (services/api/README.md): verified once a curated catalog source has been read, history once an
-- incident is on record.
UPDATE sources SET verified = true
WHERE kind = 'catalog' AND NOT synthetic AND provider_type IS NOT NULL AND last_checked_at IS NOT NULL AND last_error IS NULL;
UPDATE sources s SET has_history = true WHERE EXISTS (SELECT 1 FROM incidents i WHERE i.source_id = s.id);
