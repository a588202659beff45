-- The local service's schema. Timestamps are RFC 3339 text in UTC with microseconds
-- ("2026-11-22T08:01:02.123456Z") so that text order is time order.
-- Identifiers are 16 lowercase hex characters.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE organizations (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE users (
    id              TEXT PRIMARY KEY,
    email           TEXT NOT NULL UNIQUE COLLATE NOCASE,
    username        TEXT,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    is_org_admin    INTEGER NOT NULL DEFAULT 0,
    -- SHA-256 of the API key; the key itself is never stored.
    key_hash        BLOB NOT NULL UNIQUE,
    created_at      TEXT NOT NULL
) STRICT;

CREATE TABLE projects (
    id              TEXT PRIMARY KEY,
    owner_id        TEXT NOT NULL REFERENCES users(id),
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    project_name    TEXT NOT NULL,
    name            TEXT NOT NULL,
    description     TEXT,
    external_id     TEXT,
    public          INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    UNIQUE (organization_id, project_name)
) STRICT;

CREATE TABLE project_members (
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users(id),
    -- JSON array of permission names.
    permissions TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id)
) STRICT;
CREATE INDEX project_members_user ON project_members(user_id);

CREATE TABLE samples (
    id                        TEXT PRIMARY KEY,
    owner_id                  TEXT NOT NULL REFERENCES users(id),
    visibility                TEXT NOT NULL CHECK (visibility IN ('public', 'shared', 'private', 'importing', 'awaiting data')),
    filename                  TEXT,
    size                      INTEGER,
    -- Where the file lives in the object store, once it has one.
    object_key                TEXT,
    project_id                TEXT REFERENCES projects(id) ON DELETE SET NULL,
    primary_classification_id TEXT,
    created_at                TEXT NOT NULL,
    updated_at                TEXT NOT NULL
) STRICT;
CREATE INDEX samples_owner ON samples(owner_id, created_at);
CREATE INDEX samples_project ON samples(project_id);
CREATE INDEX samples_visibility ON samples(visibility);

CREATE TABLE metadata (
    id                 TEXT PRIMARY KEY,
    sample_id          TEXT NOT NULL UNIQUE REFERENCES samples(id) ON DELETE CASCADE,
    -- Copied from the sample so that "unique among the owner's samples" is one index.
    owner_id           TEXT NOT NULL REFERENCES users(id),
    starred            INTEGER NOT NULL DEFAULT 0,
    custom             TEXT NOT NULL DEFAULT '{}',
    external_sample_id TEXT,
    name               TEXT,
    description        TEXT,
    date_collected     TEXT,
    date_sequenced     TEXT,
    platform           TEXT,
    library_type       TEXT,
    sample_type        TEXT,
    location_lat       REAL,
    location_lon       REAL,
    location_string    TEXT
) STRICT;
CREATE INDEX metadata_external_id ON metadata(owner_id, external_sample_id);

CREATE TABLE tags (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL REFERENCES users(id),
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (owner_id, name)
) STRICT;

CREATE TABLE sample_tags (
    sample_id TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    tag_id    TEXT NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    PRIMARY KEY (sample_id, tag_id)
) STRICT;
CREATE INDEX sample_tags_tag ON sample_tags(tag_id);

-- A started upload (sample or document). A proposed sample or document exists only here until
-- it is confirmed, so it is never reachable before then.
CREATE TABLE uploads (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('sample', 'document')),
    owner_id      TEXT NOT NULL REFERENCES users(id),
    filename      TEXT NOT NULL,
    size          INTEGER NOT NULL,
    object_key    TEXT NOT NULL UNIQUE,
    -- The pre-uploaded sample this file is for, if any.
    target_sample TEXT REFERENCES samples(id) ON DELETE CASCADE,
    -- The init_upload body (metadata, tags, project) as JSON.
    request       TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    -- Set by the confirm that turned the upload into a record; a second confirm answers it again.
    confirmed_id  TEXT
) STRICT;

CREATE TABLE jobs (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    analysis_type   TEXT NOT NULL,
    public          INTEGER NOT NULL DEFAULT 1,
    draft           INTEGER NOT NULL DEFAULT 0,
    creator_id      TEXT REFERENCES users(id),
    job_args_schema TEXT NOT NULL DEFAULT '{}',
    -- What pins the job's version: engine name and version, reference data digest.
    engine          TEXT NOT NULL DEFAULT '',
    engine_version  TEXT NOT NULL DEFAULT '',
    reference       TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL
) STRICT;

CREATE TABLE analyses (
    id            TEXT PRIMARY KEY,
    sample_id     TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    job_id        TEXT NOT NULL REFERENCES jobs(id),
    analysis_type TEXT NOT NULL,
    complete      INTEGER NOT NULL DEFAULT 0,
    success       INTEGER NOT NULL DEFAULT 0,
    error_msg     TEXT,
    job_args      TEXT,
    description   TEXT,
    tax_id        TEXT,
    -- Object-store keys of what an engine stored.
    results_key   TEXT,
    readlevel_key TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
) STRICT;
CREATE INDEX analyses_sample ON analyses(sample_id);
CREATE INDEX analyses_type ON analyses(analysis_type, created_at);

CREATE TABLE analysis_dependencies (
    analysis_id   TEXT NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,
    dependency_id TEXT NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,
    download_path TEXT,
    PRIMARY KEY (analysis_id, dependency_id)
) STRICT;

-- The durable job queue: one row per analysis waiting for or held by a worker.
CREATE TABLE job_queue (
    analysis_id TEXT PRIMARY KEY REFERENCES analyses(id) ON DELETE CASCADE,
    attempts    INTEGER NOT NULL DEFAULT 0,
    -- Unset while waiting; set to when the current worker's claim lapses.
    lease_until TEXT,
    worker      TEXT,
    enqueued_at TEXT NOT NULL
) STRICT;

CREATE TABLE documents (
    id          TEXT PRIMARY KEY,
    uploader_id TEXT NOT NULL REFERENCES users(id),
    filename    TEXT NOT NULL,
    size        INTEGER NOT NULL CHECK (size >= 1),
    description TEXT,
    object_key  TEXT NOT NULL,
    created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX documents_uploader ON documents(uploader_id);

CREATE TABLE document_downloaders (
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users(id),
    PRIMARY KEY (document_id, user_id)
) STRICT;
CREATE INDEX document_downloaders_user ON document_downloaders(user_id);

CREATE TABLE sequencing_batches (
    id           TEXT PRIMARY KEY,
    batch_number TEXT NOT NULL UNIQUE,
    name         TEXT,
    owner_id     TEXT NOT NULL REFERENCES users(id),
    status       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
) STRICT;

-- Files whose object-store key must be removed (a deleted sample's file, an abandoned upload).
-- Kept in the database so that a removal interrupted by a crash is retried at the next start.
CREATE TABLE pending_deletes (
    object_key TEXT PRIMARY KEY,
    queued_at  TEXT NOT NULL
) STRICT;
