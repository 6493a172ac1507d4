-- What the token service writes: signing keys, authorization codes, refresh tokens, revoked access tokens
-- and browser login sessions. Instants that are compared are stored as milliseconds since the epoch.
CREATE TABLE signing_keys (
    kid            TEXT PRIMARY KEY,
    company        TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    alg            TEXT NOT NULL,
    sealed_private BYTEA NOT NULL,           -- PKCS#8/PKCS#1 DER, sealed with the server's secret key
    public_jwk     TEXT NOT NULL,
    created_ms     BIGINT NOT NULL,
    retired_ms     BIGINT                    -- no longer signs from then; published until retired + overlap
);
CREATE INDEX signing_keys_company ON signing_keys (company, alg);

CREATE TABLE auth_codes (
    code_hash          TEXT PRIMARY KEY,
    company            TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    client_id          TEXT NOT NULL,
    user_id            TEXT NOT NULL,
    redirect_uri       TEXT NOT NULL,
    scope              TEXT NOT NULL,
    requested_refresh  BOOLEAN NOT NULL,
    nonce              TEXT,
    code_challenge     TEXT,
    auth_time_ms       BIGINT NOT NULL,
    session_id         TEXT,
    family_id          TEXT NOT NULL,        -- the refresh-token family the exchange starts
    expires_ms         BIGINT NOT NULL,
    used_ms            BIGINT,
    access_jti         TEXT                  -- the access token the exchange issued, revoked on replay
);

CREATE TABLE refresh_tokens (
    token_hash    TEXT PRIMARY KEY,
    family_id     TEXT NOT NULL,
    company       TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    client_id     TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    scope         TEXT NOT NULL,
    auth_time_ms  BIGINT NOT NULL,
    access_jti    TEXT,
    access_exp_ms BIGINT,
    created_ms    BIGINT NOT NULL,
    expires_ms    BIGINT,                    -- NULL: unlimited
    used_ms       BIGINT,                    -- rotated: using it again revokes the family
    revoked_ms    BIGINT
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_user ON refresh_tokens (company, user_id);

CREATE TABLE revoked_access_tokens (
    jti         TEXT PRIMARY KEY,
    company     TEXT NOT NULL,
    expires_ms  BIGINT NOT NULL
);

CREATE TABLE login_sessions (
    id_hash       TEXT PRIMARY KEY,
    company       TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL,
    auth_time_ms  BIGINT NOT NULL,
    expires_ms    BIGINT NOT NULL
);
