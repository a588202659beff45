-- Callback leases, pairs joined by workers, turns between owners in the job queue and key
-- epochs: see the SQLite migration 0010.
ALTER TABLE uploads ADD COLUMN callback_until TEXT COLLATE "C";

CREATE TABLE imports (
    sample_id   TEXT COLLATE "C" PRIMARY KEY REFERENCES samples(id) ON DELETE CASCADE,
    upload_id   TEXT COLLATE "C" NOT NULL,
    r1_key      TEXT COLLATE "C" NOT NULL,
    r2_key      TEXT COLLATE "C",
    r1_name     TEXT COLLATE "C" NOT NULL,
    r2_name     TEXT COLLATE "C",
    bucket      TEXT COLLATE "C",
    r1_etag     TEXT COLLATE "C",
    r2_etag     TEXT COLLATE "C",
    object_key  TEXT COLLATE "C" NOT NULL,
    filename    TEXT COLLATE "C" NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL,
    lease_until TEXT COLLATE "C",
    worker      TEXT COLLATE "C",
    claims      BIGINT NOT NULL DEFAULT 0,
    attempts    BIGINT NOT NULL DEFAULT 0,
    error       TEXT COLLATE "C"
);
CREATE INDEX imports_waiting ON imports (error, claims, created_at);

ALTER TABLE job_queue ADD COLUMN owner_id TEXT COLLATE "C";
UPDATE job_queue SET owner_id = (
    SELECT s.owner_id FROM analyses a JOIN samples s ON s.id = a.sample_id WHERE a.id = job_queue.analysis_id
);
CREATE INDEX job_queue_owner ON job_queue (owner_id);
CREATE TABLE queue_turns (
    owner_id        TEXT COLLATE "C" PRIMARY KEY,
    last_claimed_at TEXT COLLATE "C" NOT NULL
);

ALTER TABLE users ADD COLUMN key_epoch BIGINT NOT NULL DEFAULT 0;
