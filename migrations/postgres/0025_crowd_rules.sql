-- Notification rules get the crowd.signal trigger (issue #17, decision 0015) and its minimum confidence (70: every signal).
ALTER TABLE notification_rules DROP CONSTRAINT IF EXISTS notification_rules_triggers_check;
ALTER TABLE notification_rules ADD CONSTRAINT notification_rules_triggers_check CHECK (
  cardinality(triggers) > 0 AND triggers <@ ARRAY[
    'component.critical', 'component.degraded', 'component.recovered', 'component.maintenance',
    'monitor.down', 'monitor.degraded', 'monitor.recovered', 'monitor.ssl_expiring',
    'incident.created', 'incident.updated', 'incident.resolved',
    'crowd.signal'
  ]::text[]
);
ALTER TABLE notification_rules
  ADD COLUMN crowd_min_confidence integer NOT NULL DEFAULT 70 CHECK (crowd_min_confidence BETWEEN 70 AND 100);
