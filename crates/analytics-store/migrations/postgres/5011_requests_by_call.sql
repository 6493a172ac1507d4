-- The requests by the call each becomes: how the sweep of unowned objects (analytics' `orphans`) finds
-- whether an object under a call's prefix belongs to a request still being transcribed.
CREATE INDEX analytics_requests_by_call ON analytics_requests (call_id);
