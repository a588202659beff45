-- Signing in from a browser. A user may have a password, kept as an argon2id hash in its PHC
-- string form (salt and parameters inside); NULL: the user signs in with their API key only.
ALTER TABLE users ADD COLUMN password_hash TEXT;

-- The sessions of signed-in browsers, kept here so that a user sees and ends them and every
-- API host knows them. The cookie holds a random secret; only its SHA-256 is stored. The
-- CSRF token is sent back by the page on every write made with the cookie.
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    token_hash   BLOB NOT NULL UNIQUE,
    csrf_token   TEXT NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    user_agent   TEXT,
    address      TEXT
) STRICT;
CREATE INDEX sessions_user ON sessions (user_id, created_at);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- Failed sign-ins per account and per address: each one past a few makes the next attempt
-- wait longer (see store/sessions.rs); none locks an account for good.
CREATE TABLE sign_in_failures (
    subject        TEXT PRIMARY KEY,
    failures       INTEGER NOT NULL,
    last_failed_at TEXT NOT NULL
) STRICT;
