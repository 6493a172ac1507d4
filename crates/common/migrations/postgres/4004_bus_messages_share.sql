-- Messages name whose work they are (a company): consumers and the relay take a topic's messages share
-- by share. A share's oldest ready message is the first visible entry of (topic, share) in sequence
-- order, and the shares of a topic are found by skipping from one to the next along the same index.
ALTER TABLE bus_messages ADD COLUMN share TEXT NOT NULL DEFAULT '';
DROP INDEX bus_messages_ready;
CREATE INDEX bus_messages_ready ON bus_messages (topic, share, seq, visible_at_ms) WHERE dead_reason IS NULL;
