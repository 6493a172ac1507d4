-- The directory shared by the auth and admin services: companies (tenants), roles, users, OAuth clients.
CREATE TABLE companies (
    id          TEXT PRIMARY KEY,            -- the company short name, <company> in /oauth/<company>
    name        TEXT NOT NULL,
    created_on  TEXT NOT NULL
);

CREATE TABLE roles (
    company      TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    permissions  TEXT NOT NULL DEFAULT '[]', -- JSON array of permission names
    created_on   TEXT NOT NULL,
    created_by   TEXT,
    modified_on  TEXT NOT NULL,
    modified_by  TEXT NOT NULL,
    version      BIGINT NOT NULL DEFAULT 1,
    PRIMARY KEY (company, name)
);

CREATE TABLE users (
    id                          TEXT PRIMARY KEY,
    company                     TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    username                    TEXT NOT NULL,
    first_name                  TEXT NOT NULL DEFAULT '',
    last_name                   TEXT NOT NULL DEFAULT '',
    salutation                  TEXT,
    email                       TEXT,
    phone                       TEXT,
    automatic_update            BOOLEAN NOT NULL DEFAULT FALSE,
    excluded_from_user_activity BOOLEAN NOT NULL DEFAULT FALSE,
    company_account_id          TEXT,
    login_blocked               BOOLEAN NOT NULL DEFAULT FALSE,
    login_blocked_reason        TEXT,
    api_access                  BOOLEAN NOT NULL DEFAULT FALSE,
    status                      TEXT NOT NULL DEFAULT 'ACTIVE',
    primary_role                TEXT NOT NULL,
    extra_roles                 TEXT NOT NULL DEFAULT '[]',
    data_access                 TEXT NOT NULL DEFAULT '{"organization":[],"segments":[]}',
    links                       TEXT,
    password_hash               TEXT,
    password_last_set           TEXT,
    password_last_emailed       TEXT,
    password_not_set_reason     TEXT,
    created_on                  TEXT NOT NULL,
    created_by                  TEXT,
    modified_on                 TEXT NOT NULL,
    modified_by                 TEXT NOT NULL,
    last_login                  TEXT,
    login_count                 BIGINT NOT NULL DEFAULT 0,
    failed_login_count          BIGINT NOT NULL DEFAULT 0,
    locked_until_ms             BIGINT,
    version                     BIGINT NOT NULL DEFAULT 1,
    UNIQUE (company, username)
);

CREATE TABLE oauth_clients (
    client_id           TEXT PRIMARY KEY,
    company             TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    name                TEXT NOT NULL,
    secret_hash         TEXT,                 -- keyed hash; NULL for a public client (PKCE, no secret)
    grant_types         TEXT NOT NULL,        -- JSON array
    redirect_uris       TEXT NOT NULL,        -- JSON array
    scopes              TEXT NOT NULL,        -- JSON array of API scopes for client-credentials tokens
    issue_refresh_token BOOLEAN NOT NULL DEFAULT FALSE,
    access_token_ttl    BIGINT NOT NULL DEFAULT 3600,
    refresh_token_ttl   BIGINT,               -- seconds; NULL is unlimited
    secret_rotated_on   TEXT,
    created_on          TEXT NOT NULL,
    created_by          TEXT,
    modified_on         TEXT NOT NULL,
    modified_by         TEXT NOT NULL,
    version             BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX oauth_clients_company ON oauth_clients (company, client_id);
