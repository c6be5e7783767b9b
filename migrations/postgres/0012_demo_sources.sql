-- Synthetic sources belong to the demo (`statusgrid start --demo`), not to production: data
-- directories loaded with the former default catalog (real pages plus 4,100 synthetic ones) keep
-- their synthetic sources, with history and stack items, but disabled, so they are neither
-- served nor polled. `statusgrid start --demo` enables the ones it serves.
UPDATE sources SET enabled = false, updated_at = now() WHERE synthetic AND enabled;
