-- The audit trail: every change (and every download) of an organisation's records, people,
-- keys and sessions. A request appends its entry in the transaction of its change, unchained;
-- the chainer (one host at a time, by lease) then numbers each organisation's entries and
-- chains them by hash, so that appending takes no lock beyond its own row.
CREATE TABLE audit_entries (
    id              TEXT COLLATE "C" PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL,
    at              TEXT COLLATE "C" NOT NULL,
    actor_id        TEXT COLLATE "C",
    actor_email     TEXT COLLATE "C",
    address         TEXT COLLATE "C",
    client          TEXT COLLATE "C",
    action          TEXT COLLATE "C" NOT NULL,
    target_kind     TEXT COLLATE "C" NOT NULL,
    target_id       TEXT COLLATE "C" NOT NULL,
    changes         TEXT COLLATE "C" NOT NULL,
    seq             BIGINT,
    prev_hash       TEXT COLLATE "C",
    hash            TEXT COLLATE "C",
    UNIQUE (organization_id, seq)
);
CREATE INDEX audit_unchained ON audit_entries (at, id) WHERE seq IS NULL;
CREATE INDEX audit_by_time ON audit_entries (organization_id, at, id);

-- Signed checkpoints: where the chain of an organisation stood when entries older than the
-- retention were removed; verifying starts from the last one.
CREATE TABLE audit_checkpoints (
    organization_id TEXT COLLATE "C" NOT NULL,
    seq             BIGINT NOT NULL,
    hash            TEXT COLLATE "C" NOT NULL,
    at              TEXT COLLATE "C" NOT NULL,
    signature       TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (organization_id, seq)
);
