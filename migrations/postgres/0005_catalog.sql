-- Catalog sources generated for the simulator are marked, so they are never mistaken for real pages.
ALTER TABLE sources ADD COLUMN synthetic boolean NOT NULL DEFAULT false;
ALTER TABLE sources ADD CONSTRAINT sources_synthetic_catalog CHECK (NOT synthetic OR kind = 'catalog');
CREATE INDEX sources_check_class_idx ON sources (check_class) WHERE enabled;
