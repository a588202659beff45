-- Single sign-on (OpenID Connect). A user is linked to a provider's account by the provider's
-- issuer and the account's subject, never by e-mail address alone. A browser's sign-in at the
-- provider is remembered for ten minutes, by the SHA-256 of its `state`, with the PKCE verifier
-- and the nonce it needs when the browser comes back. A session made by single sign-on keeps
-- the provider's session id and the ID token: the provider's back-channel logout names the
-- session by them, and signing out of MGDS ends the session at the provider with the ID token
-- as its hint.
CREATE TABLE user_identities (
    issuer            TEXT NOT NULL,
    subject           TEXT NOT NULL,
    user_id           TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    email             TEXT,
    created_at        TEXT NOT NULL,
    last_signed_in_at TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
) STRICT;
CREATE INDEX user_identities_user ON user_identities (user_id);

CREATE TABLE sso_sign_ins (
    state_hash  BLOB PRIMARY KEY,
    verifier    TEXT NOT NULL,
    nonce       TEXT NOT NULL,
    return_to   TEXT NOT NULL,
    created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX sso_sign_ins_created ON sso_sign_ins (created_at);

ALTER TABLE sessions ADD COLUMN sso_issuer TEXT;
ALTER TABLE sessions ADD COLUMN sso_subject TEXT;
ALTER TABLE sessions ADD COLUMN sso_sid TEXT;
ALTER TABLE sessions ADD COLUMN id_token TEXT;
CREATE INDEX sessions_sso ON sessions (sso_issuer, sso_sid);
CREATE INDEX sessions_sso_subject ON sessions (sso_issuer, sso_subject);
