-- The console's sign-in sessions: the browser holds only the random id (in an HttpOnly cookie), whose
-- hash keys the row; the user's access token is kept sealed under a key derived from the server key.
CREATE TABLE console_sessions (
    id_hash TEXT PRIMARY KEY,
    company TEXT NOT NULL,
    username TEXT NOT NULL,
    access_token TEXT NOT NULL,
    csrf TEXT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_ms);
