-- The ingestion service's tables (versions 6001 to 6999): projects, their events, and the insert ids
-- remembered for deduplication. Events are partitioned by month of event time; the service creates each
-- month's partition before it first writes into it (docs/ingest-api.md, Storage).

CREATE TABLE ingest_projects (
    app_key TEXT PRIMARY KEY,
    company TEXT NOT NULL,
    name TEXT NOT NULL,
    server_time BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT ingest_projects_company_name UNIQUE (company, name)
);

CREATE SEQUENCE ingest_event_seq CACHE 1000;

CREATE TABLE ingest_events (
    app_key TEXT NOT NULL,
    event_time TIMESTAMPTZ NOT NULL,
    seq BIGINT NOT NULL DEFAULT nextval('ingest_event_seq'),
    event_name TEXT NOT NULL,
    user_id TEXT NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
    insert_id TEXT,
    session_dua TEXT,
    ip TEXT,
    browser TEXT,
    browser_version TEXT,
    os TEXT,
    device_type TEXT,
    city TEXT,
    state TEXT,
    country TEXT,
    properties TEXT NOT NULL
) PARTITION BY RANGE (event_time);

CREATE INDEX ingest_events_by_project_time ON ingest_events (app_key, event_time, seq);

CREATE TABLE ingest_insert_ids (
    app_key TEXT NOT NULL,
    insert_id TEXT NOT NULL,
    seen_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (app_key, insert_id)
);

CREATE INDEX ingest_insert_ids_by_age ON ingest_insert_ids (seen_at);
