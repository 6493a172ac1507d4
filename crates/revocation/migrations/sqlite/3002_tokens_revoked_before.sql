-- Every token a client or a user was issued before an instant, revoked at once: a deleted client or one
-- whose secret was rotated, a blocked, deactivated or deleted user. One row per holder; a later revocation
-- of the same holder moves its instant forward. For a client the instant is compared with when the secret
-- that authenticated the token's issue was set, for a user with when the user's sessions had last been
-- ended before the issue (both carried by the token); a deleted holder's instant is the largest there is.
-- `kept_until_ms` is when no token it refuses can be alive any more;
-- NULL keeps the row (a rotated client's refresh tokens may live for ever) until the client is deleted.
CREATE TABLE tokens_revoked_before (
    company        TEXT NOT NULL,
    holder_kind    TEXT NOT NULL,
    holder_id      TEXT NOT NULL,
    before_ms      BIGINT NOT NULL,
    kept_until_ms  BIGINT,
    PRIMARY KEY (company, holder_kind, holder_id)
);
CREATE INDEX tokens_revoked_before_kept_until ON tokens_revoked_before (kept_until_ms);
