-- Dead letters are counted per topic at every scrape of /metrics and listed or replayed oldest first by
-- the operator commands; the ready index leaves them out, so they get one of their own.
CREATE INDEX bus_messages_dead ON bus_messages (topic, seq) WHERE dead_reason IS NOT NULL;
