-- Single sign-on (OpenID Connect): see the SQLite migration 0020.
CREATE TABLE user_identities (
    issuer            TEXT COLLATE "C" NOT NULL,
    subject           TEXT COLLATE "C" NOT NULL,
    user_id           TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    email             TEXT COLLATE "C",
    created_at        TEXT COLLATE "C" NOT NULL,
    last_signed_in_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);

CREATE TABLE sso_sign_ins (
    state_hash  BYTEA PRIMARY KEY,
    verifier    TEXT COLLATE "C" NOT NULL,
    nonce       TEXT COLLATE "C" NOT NULL,
    return_to   TEXT COLLATE "C" NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL
);
CREATE INDEX sso_sign_ins_created ON sso_sign_ins (created_at);

ALTER TABLE sessions ADD COLUMN sso_issuer TEXT COLLATE "C";
ALTER TABLE sessions ADD COLUMN sso_subject TEXT COLLATE "C";
ALTER TABLE sessions ADD COLUMN sso_sid TEXT COLLATE "C";
ALTER TABLE sessions ADD COLUMN id_token TEXT COLLATE "C";
CREATE INDEX sessions_sso ON sessions (sso_issuer, sso_sid);
CREATE INDEX sessions_sso_subject ON sessions (sso_issuer, sso_subject);
