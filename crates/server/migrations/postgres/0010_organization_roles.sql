-- Organisation roles replace the organisation-admin flag: every admin becomes an admin, and
-- the earliest admin of each organisation its owner (who may then give roles to others).
ALTER TABLE users ADD COLUMN role TEXT COLLATE "C" NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'admin', 'owner'));
UPDATE users SET role = 'admin' WHERE is_org_admin <> 0;
UPDATE users SET role = 'owner' WHERE id IN (
    SELECT (SELECT a.id FROM users a WHERE a.organization_id = o.id AND a.is_org_admin <> 0
            ORDER BY a.created_at, a.id LIMIT 1)
    FROM organizations o
);
ALTER TABLE users DROP COLUMN is_org_admin;

-- A disabled account keeps its records; its keys, sessions and download links stop.
ALTER TABLE users ADD COLUMN disabled_at TEXT COLLATE "C";
ALTER TABLE users ADD COLUMN disabled_by TEXT COLLATE "C";

CREATE INDEX users_organization ON users (organization_id, email);

-- One-time links that let a user choose a password: an invitation, or a reset an admin made.
-- The link holds a random secret; only its SHA-256 is kept. A user has at most one open link.
CREATE TABLE password_links (
    user_id    TEXT COLLATE "C" PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    token_hash BYTEA NOT NULL UNIQUE,
    kind       TEXT COLLATE "C" NOT NULL CHECK (kind IN ('invitation', 'reset')),
    created_by TEXT COLLATE "C",
    created_at TEXT COLLATE "C" NOT NULL,
    expires_at TEXT COLLATE "C" NOT NULL
);
