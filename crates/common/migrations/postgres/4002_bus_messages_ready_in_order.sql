-- Consumers lease the oldest ready message of a topic (`visible_at_ms <= now ORDER BY seq LIMIT 1`). On
-- (topic, visible_at_ms, seq) that meant collecting and sorting every ready message of the topic for each
-- lease, so draining a backlog of n messages cost n sorts of up to n rows. In sequence order per topic the
-- first ready entry is at the front: only the messages leased or waiting for a retry are stepped over.
DROP INDEX bus_messages_ready;
CREATE INDEX bus_messages_ready ON bus_messages (topic, seq, visible_at_ms) WHERE dead_reason IS NULL;
