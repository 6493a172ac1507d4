-- The revocation list of access tokens now belongs to the revocation crate (its table
-- access_token_revocations, created by its migration 3001, which the token service applies first).
INSERT OR IGNORE INTO access_token_revocations (jti, company, expires_ms)
SELECT jti, company, expires_ms FROM revoked_access_tokens;
DROP TABLE revoked_access_tokens;
