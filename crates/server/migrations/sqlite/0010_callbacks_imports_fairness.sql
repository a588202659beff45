-- One callback per upload at a time: a callback holds the upload until this time (by the
-- database's clock), so that two callbacks of one upload never take its files together; a host
-- that dies holding it lets it lapse.
ALTER TABLE uploads ADD COLUMN callback_until TEXT;

-- A sample whose file needs work on its bytes becomes a sample at once, `importing`, its file
-- made afterwards where analyses run: a pair uploaded as two files is joined, and a file in an
-- upload's own bucket of the store is copied in (exactly the version checked, `r1_etag`,
-- `r2_etag`). The work waits here, claimed by workers under a lease as analyses are; work that
-- failed keeps its reason (`error`) and the sample stays `importing`.
CREATE TABLE imports (
    sample_id   TEXT PRIMARY KEY REFERENCES samples(id) ON DELETE CASCADE,
    upload_id   TEXT NOT NULL,
    r1_key      TEXT NOT NULL,
    r2_key      TEXT,
    r1_name     TEXT NOT NULL,
    r2_name     TEXT,
    bucket      TEXT,
    r1_etag     TEXT,
    r2_etag     TEXT,
    -- The object key and name of the joined file.
    object_key  TEXT NOT NULL,
    filename    TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    lease_until TEXT,
    worker      TEXT,
    claims      INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    error       TEXT
) STRICT;
CREATE INDEX imports_waiting ON imports (error, claims, created_at);

-- Whose analysis each queued one is, so that claims take turns between owners: one owner's
-- burst does not hold everyone else's analyses behind it.
ALTER TABLE job_queue ADD COLUMN owner_id TEXT;
UPDATE job_queue SET owner_id = (
    SELECT s.owner_id FROM analyses a JOIN samples s ON s.id = a.sample_id WHERE a.id = job_queue.analysis_id
);
CREATE INDEX job_queue_owner ON job_queue (owner_id);
-- When each owner's analysis was last claimed: the owner served longest ago goes first.
CREATE TABLE queue_turns (
    owner_id        TEXT PRIMARY KEY,
    last_claimed_at TEXT NOT NULL
) STRICT;

-- Bumped when a user's API key is rotated: download addresses name the epoch they were made
-- in, so those made with the old key stop working at once.
ALTER TABLE users ADD COLUMN key_epoch INTEGER NOT NULL DEFAULT 0;
