-- Messages of the bus, written in the transaction of the change they announce (the outbox). On the
-- embedded bus consumers lease them from here directly; with RabbitMQ a relay moves them to the broker.
-- A leased message is invisible until visible_at_ms; one whose lease runs out is delivered again.
CREATE TABLE bus_messages (
    seq            BIGSERIAL PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    topic          TEXT NOT NULL,
    body           BYTEA NOT NULL,
    traceparent    TEXT,
    attempt        INTEGER NOT NULL DEFAULT 0,
    visible_at_ms  BIGINT NOT NULL,
    lease          BIGINT,
    dead_reason    TEXT,
    created_ms     BIGINT NOT NULL
);
CREATE INDEX bus_messages_ready ON bus_messages (topic, visible_at_ms, seq) WHERE dead_reason IS NULL;
