-- The service's schema on PostgreSQL: the schema the SQLite migrations reach at their 0007,
-- written once. Later changes come as a migration in each folder.
--
-- The service runs the same SQL on both databases. So that it can, the tables store values as
-- SQLite does (timestamps and JSON as text, booleans as 0/1 integers), text compares byte by byte
-- (collation "C", as SQLite's BINARY), and the few functions SQLite has and PostgreSQL lacks are
-- defined here, at the end.
-- Timestamps are RFC 3339 text in UTC with microseconds ("2026-11-22T08:01:02.123456+00:00") so
-- that text order is time order. Identifiers are 16 lowercase hex characters.

CREATE TABLE settings (
    key   TEXT COLLATE "C" PRIMARY KEY,
    value TEXT COLLATE "C" NOT NULL
);

CREATE TABLE organizations (
    id         TEXT COLLATE "C" PRIMARY KEY,
    name       TEXT COLLATE "C" NOT NULL UNIQUE,
    created_at TEXT COLLATE "C" NOT NULL
);

CREATE TABLE users (
    id              TEXT COLLATE "C" PRIMARY KEY,
    -- Stored in lower case (ASCII): addresses compare without regard to case.
    email           TEXT COLLATE "C" NOT NULL UNIQUE,
    username        TEXT COLLATE "C",
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations(id),
    is_org_admin    BIGINT NOT NULL DEFAULT 0,
    -- SHA-256 of the API key; the key itself is never stored.
    key_hash        BYTEA NOT NULL UNIQUE,
    created_at      TEXT COLLATE "C" NOT NULL
);

CREATE TABLE projects (
    id              TEXT COLLATE "C" PRIMARY KEY,
    owner_id        TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations(id),
    project_name    TEXT COLLATE "C" NOT NULL,
    name            TEXT COLLATE "C" NOT NULL,
    description     TEXT COLLATE "C",
    external_id     TEXT COLLATE "C",
    public          BIGINT NOT NULL DEFAULT 0,
    created_at      TEXT COLLATE "C" NOT NULL,
    UNIQUE (organization_id, project_name)
);

CREATE TABLE project_members (
    -- Insertion order, as SQLite's rowid.
    rowid       BIGSERIAL,
    project_id  TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id     TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    -- JSON array of permission names.
    permissions TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user ON project_members(user_id);

CREATE TABLE samples (
    id                        TEXT COLLATE "C" PRIMARY KEY,
    owner_id                  TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    visibility                TEXT COLLATE "C" NOT NULL CHECK (visibility IN ('public', 'shared', 'private', 'importing', 'awaiting data')),
    filename                  TEXT COLLATE "C",
    size                      BIGINT,
    -- Where the file lives in the object store, once it has one.
    object_key                TEXT COLLATE "C",
    project_id                TEXT COLLATE "C" REFERENCES projects(id) ON DELETE SET NULL,
    primary_classification_id TEXT COLLATE "C",
    created_at                TEXT COLLATE "C" NOT NULL,
    updated_at                TEXT COLLATE "C" NOT NULL
);
CREATE INDEX samples_owner ON samples(owner_id, created_at);
CREATE INDEX samples_project ON samples(project_id);
CREATE INDEX samples_visibility ON samples(visibility);

CREATE TABLE metadata (
    -- Insertion order, as SQLite's rowid.
    rowid              BIGSERIAL,
    id                 TEXT COLLATE "C" PRIMARY KEY,
    sample_id          TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES samples(id) ON DELETE CASCADE,
    -- Copied from the sample so that "unique among the owner's samples" is one index.
    owner_id           TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    starred            BIGINT NOT NULL DEFAULT 0,
    custom             TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    external_sample_id TEXT COLLATE "C",
    name               TEXT COLLATE "C",
    description        TEXT COLLATE "C",
    date_collected     TEXT COLLATE "C",
    date_sequenced     TEXT COLLATE "C",
    platform           TEXT COLLATE "C",
    library_type       TEXT COLLATE "C",
    sample_type        TEXT COLLATE "C",
    location_lat       DOUBLE PRECISION,
    location_lon       DOUBLE PRECISION,
    location_string    TEXT COLLATE "C"
);
CREATE INDEX metadata_external_id ON metadata(owner_id, external_sample_id);

CREATE TABLE tags (
    id         TEXT COLLATE "C" PRIMARY KEY,
    owner_id   TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    name       TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    UNIQUE (owner_id, name)
);

CREATE TABLE sample_tags (
    sample_id TEXT COLLATE "C" NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    tag_id    TEXT COLLATE "C" NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    PRIMARY KEY (sample_id, tag_id)
);
CREATE INDEX sample_tags_tag ON sample_tags(tag_id);

-- A started upload (sample or document). A proposed sample or document exists only here until
-- it is confirmed, so it is never reachable before then.
CREATE TABLE uploads (
    -- Insertion order, as SQLite's rowid.
    rowid             BIGSERIAL,
    id                TEXT COLLATE "C" PRIMARY KEY,
    kind              TEXT COLLATE "C" NOT NULL CHECK (kind IN ('sample', 'document')),
    owner_id          TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    filename          TEXT COLLATE "C" NOT NULL,
    size              BIGINT NOT NULL,
    object_key        TEXT COLLATE "C" NOT NULL UNIQUE,
    -- The pre-uploaded sample this file is for, if any.
    target_sample     TEXT COLLATE "C" REFERENCES samples(id) ON DELETE CASCADE,
    -- The init_upload body (metadata, tags, project) as JSON.
    request           TEXT COLLATE "C" NOT NULL,
    created_at        TEXT COLLATE "C" NOT NULL,
    expires_at        TEXT COLLATE "C" NOT NULL,
    -- Set by the confirm that turned the upload into a record; a second confirm answers it again.
    confirmed_id      TEXT COLLATE "C",
    -- How the file arrives: the spec's signed form POST, or S3 requests (an S3 upload announces
    -- no size; the stored object's size is taken when it is confirmed).
    transport         TEXT COLLATE "C" NOT NULL DEFAULT 'form' CHECK (transport IN ('form', 's3')),
    -- Read 2 of a paired upload, kept beside read 1 until the confirmation interleaves the two.
    paired_object_key TEXT COLLATE "C",
    paired_filename   TEXT COLLATE "C"
);

CREATE TABLE jobs (
    id              TEXT COLLATE "C" PRIMARY KEY,
    name            TEXT COLLATE "C" NOT NULL,
    analysis_type   TEXT COLLATE "C" NOT NULL,
    public          BIGINT NOT NULL DEFAULT 1,
    draft           BIGINT NOT NULL DEFAULT 0,
    creator_id      TEXT COLLATE "C" REFERENCES users(id),
    job_args_schema TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    -- What pins the job's version: engine name and version, reference data digest.
    engine          TEXT COLLATE "C" NOT NULL DEFAULT '',
    engine_version  TEXT COLLATE "C" NOT NULL DEFAULT '',
    reference       TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at      TEXT COLLATE "C" NOT NULL
);

CREATE TABLE analyses (
    id            TEXT COLLATE "C" PRIMARY KEY,
    sample_id     TEXT COLLATE "C" NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    job_id        TEXT COLLATE "C" NOT NULL REFERENCES jobs(id),
    analysis_type TEXT COLLATE "C" NOT NULL,
    complete      BIGINT NOT NULL DEFAULT 0,
    success       BIGINT NOT NULL DEFAULT 0,
    error_msg     TEXT COLLATE "C",
    job_args      TEXT COLLATE "C",
    description   TEXT COLLATE "C",
    tax_id        TEXT COLLATE "C",
    -- Object-store keys of what an engine stored.
    results_key   TEXT COLLATE "C",
    readlevel_key TEXT COLLATE "C",
    created_at    TEXT COLLATE "C" NOT NULL,
    updated_at    TEXT COLLATE "C" NOT NULL
);
CREATE INDEX analyses_sample ON analyses(sample_id);
CREATE INDEX analyses_type ON analyses(analysis_type, created_at);

CREATE TABLE analysis_dependencies (
    analysis_id   TEXT COLLATE "C" NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,
    dependency_id TEXT COLLATE "C" NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,
    download_path TEXT COLLATE "C",
    PRIMARY KEY (analysis_id, dependency_id)
);

-- The durable job queue: one row per analysis waiting for or held by a worker.
CREATE TABLE job_queue (
    analysis_id TEXT COLLATE "C" PRIMARY KEY REFERENCES analyses(id) ON DELETE CASCADE,
    -- Failed runs (the engine failed in a way that may pass).
    attempts    BIGINT NOT NULL DEFAULT 0,
    -- Unset while waiting; set to when the current worker's claim lapses.
    lease_until TEXT COLLATE "C",
    worker      TEXT COLLATE "C",
    enqueued_at TEXT COLLATE "C" NOT NULL,
    -- Claims by a worker, counted apart from failed runs.
    claims      BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE documents (
    id          TEXT COLLATE "C" PRIMARY KEY,
    uploader_id TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    filename    TEXT COLLATE "C" NOT NULL,
    size        BIGINT NOT NULL CHECK (size >= 1),
    description TEXT COLLATE "C",
    object_key  TEXT COLLATE "C" NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL
);
CREATE INDEX documents_uploader ON documents(uploader_id);

CREATE TABLE document_downloaders (
    document_id TEXT COLLATE "C" NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    user_id     TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    PRIMARY KEY (document_id, user_id)
);
CREATE INDEX document_downloaders_user ON document_downloaders(user_id);

CREATE TABLE sequencing_batches (
    id           TEXT COLLATE "C" PRIMARY KEY,
    batch_number TEXT COLLATE "C" NOT NULL UNIQUE,
    name         TEXT COLLATE "C",
    owner_id     TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    status       TEXT COLLATE "C" NOT NULL,
    created_at   TEXT COLLATE "C" NOT NULL,
    updated_at   TEXT COLLATE "C" NOT NULL
);

-- Files whose object-store key must be removed (a deleted sample's file, an abandoned upload).
-- Kept in the database so that a removal interrupted by a crash is retried at the next start.
CREATE TABLE pending_deletes (
    object_key TEXT COLLATE "C" PRIMARY KEY,
    queued_at  TEXT COLLATE "C" NOT NULL
);

-- Credentials minted for one upload through the S3-compatible endpoint.
CREATE TABLE s3_grants (
    access_key TEXT COLLATE "C" PRIMARY KEY,
    secret     TEXT COLLATE "C" NOT NULL,
    upload_id  TEXT COLLATE "C" NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    expires_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX s3_grants_upload ON s3_grants (upload_id);

-- S3 multipart uploads under way, and the parts that arrived (see the SQLite migrations 0002
-- and 0006).
CREATE TABLE s3_multipart (
    id             TEXT COLLATE "C" PRIMARY KEY,
    access_key     TEXT COLLATE "C" NOT NULL REFERENCES s3_grants(access_key) ON DELETE CASCADE,
    object_key     TEXT COLLATE "C" NOT NULL,
    created_at     TEXT COLLATE "C" NOT NULL,
    assembly_parts BIGINT NOT NULL DEFAULT 0,
    assembly_bytes BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE s3_parts (
    multipart_id    TEXT COLLATE "C" NOT NULL REFERENCES s3_multipart(id) ON DELETE CASCADE,
    part_number     BIGINT NOT NULL,
    e_tag           TEXT COLLATE "C" NOT NULL,
    size            BIGINT NOT NULL,
    assembly_offset BIGINT,
    PRIMARY KEY (multipart_id, part_number)
);

-- The people a user looked up by their exact e-mail address.
CREATE TABLE user_contacts (
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    contact_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    found_at   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, contact_id)
);

-- SQLite's functions that the service's SQL uses and PostgreSQL lacks.

-- instr(haystack, needle): the 1-based position of needle, 0 if absent.
CREATE FUNCTION instr(text, text) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS 'SELECT strpos($1, $2)';

-- json_object(key, value) for one pair, as JSON.
CREATE FUNCTION json_object(text, text) RETURNS json
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS 'SELECT json_build_object($1, $2)';

-- json_group_array(value): the values of a group as a JSON array, as text; '[]' for none.
CREATE FUNCTION mgds_json_array_text(anycompatiblearray) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS 'SELECT array_to_json($1)::text';
CREATE AGGREGATE json_group_array(anycompatible) (
    SFUNC = array_append,
    STYPE = anycompatiblearray,
    FINALFUNC = mgds_json_array_text,
    INITCOND = '{}'
);
