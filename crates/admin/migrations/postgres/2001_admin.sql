-- What the administration service writes besides the directory: its audit log, and the request counters
-- that make its rate limits hold across replicas.
CREATE TABLE admin_audit_log (
    id             BIGSERIAL PRIMARY KEY,
    company        TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    at_ms          BIGINT NOT NULL,
    actor          TEXT NOT NULL,            -- username of the calling account
    actor_id       TEXT NOT NULL,            -- its user id
    action         TEXT NOT NULL,            -- create | replace | delete | rotate_secret
    resource_type  TEXT NOT NULL,            -- user | role | client
    resource_id    TEXT NOT NULL,            -- username, role name or client id
    version        BIGINT,                   -- the resource version the change produced (NULL on delete)
    changes        TEXT NOT NULL             -- JSON object: field -> {"from": .., "to": ..}
);
CREATE INDEX admin_audit_log_company ON admin_audit_log (company, id);
CREATE INDEX admin_audit_log_resource ON admin_audit_log (company, resource_type, resource_id, id);

-- Requests counted per calling account and window; every replica adds its deltas and reads the sum.
CREATE TABLE admin_rate_counters (
    account       TEXT NOT NULL,             -- <company>/<subject>
    window_kind   TEXT NOT NULL,             -- 's' (one second) or 'd' (one UTC day)
    window_start  BIGINT NOT NULL,           -- seconds or days since the epoch
    count         BIGINT NOT NULL,
    PRIMARY KEY (account, window_kind, window_start)
);

-- Replicas alive recently: each limiter lets itself admit only its share of what is left.
CREATE TABLE admin_replicas (
    replica_id  TEXT PRIMARY KEY,
    seen_ms     BIGINT NOT NULL
);
