-- Access tokens revoked before they expire (RFC 7009 revocation, a replayed authorization code), by token
-- id. An entry is kept until the token would have expired anyway.
CREATE TABLE access_token_revocations (
    jti         TEXT PRIMARY KEY,
    company     TEXT NOT NULL,
    expires_ms  BIGINT NOT NULL
);
CREATE INDEX access_token_revocations_expiry ON access_token_revocations (expires_ms);
