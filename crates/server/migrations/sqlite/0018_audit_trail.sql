-- The audit trail: every change (and every download) of an organisation's records, people,
-- keys and sessions. A request appends its entry in the transaction of its change, unchained;
-- the chainer (one host at a time, by lease) then numbers each organisation's entries and
-- chains them by hash, so that appending takes no lock beyond its own row.
CREATE TABLE audit_entries (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    at              TEXT NOT NULL,
    actor_id        TEXT,
    actor_email     TEXT,
    address         TEXT,
    client          TEXT,
    action          TEXT NOT NULL,
    target_kind     TEXT NOT NULL,
    target_id       TEXT NOT NULL,
    changes         TEXT NOT NULL,
    seq             INTEGER,
    prev_hash       TEXT,
    hash            TEXT,
    UNIQUE (organization_id, seq)
) STRICT;
CREATE INDEX audit_unchained ON audit_entries (at, id) WHERE seq IS NULL;
CREATE INDEX audit_by_time ON audit_entries (organization_id, at, id);

-- Signed checkpoints: where the chain of an organisation stood when entries older than the
-- retention were removed; verifying starts from the last one.
CREATE TABLE audit_checkpoints (
    organization_id TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    hash            TEXT NOT NULL,
    at              TEXT NOT NULL,
    signature       TEXT NOT NULL,
    PRIMARY KEY (organization_id, seq)
) STRICT;
