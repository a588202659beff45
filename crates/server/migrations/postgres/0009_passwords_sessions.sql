-- Signing in from a browser: see the SQLite migration 0016.
ALTER TABLE users ADD COLUMN password_hash TEXT COLLATE "C";

CREATE TABLE sessions (
    id           TEXT COLLATE "C" PRIMARY KEY,
    token_hash   BYTEA NOT NULL UNIQUE,
    csrf_token   TEXT COLLATE "C" NOT NULL,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at   TEXT COLLATE "C" NOT NULL,
    last_seen_at TEXT COLLATE "C" NOT NULL,
    expires_at   TEXT COLLATE "C" NOT NULL,
    user_agent   TEXT COLLATE "C",
    address      TEXT COLLATE "C"
);
CREATE INDEX sessions_user ON sessions (user_id, created_at);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE sign_in_failures (
    subject        TEXT COLLATE "C" PRIMARY KEY,
    failures       BIGINT NOT NULL,
    last_failed_at TEXT COLLATE "C" NOT NULL
);
