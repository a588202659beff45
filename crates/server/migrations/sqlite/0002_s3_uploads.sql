-- Uploads through the S3-compatible endpoint (`init_multipart_upload`), as the real service's
-- clients make them: credentials minted per upload, single PUTs and multipart uploads.

-- How the file of an upload arrives: the spec's signed form POST, or S3 requests. An S3 upload
-- announces no size; the stored object's size is taken when it is confirmed.
ALTER TABLE uploads ADD COLUMN transport TEXT NOT NULL DEFAULT 'form' CHECK (transport IN ('form', 's3'));
-- Read 2 of a paired upload, kept beside read 1 until the confirmation interleaves the two into
-- the sample's one file.
ALTER TABLE uploads ADD COLUMN paired_object_key TEXT;
ALTER TABLE uploads ADD COLUMN paired_filename TEXT;

-- Credentials minted for one upload: they sign requests for that upload's object keys and
-- nothing else. The secret is kept as it is because checking a signature needs it; it is good
-- for one upload and expires.
CREATE TABLE s3_grants (
    access_key TEXT PRIMARY KEY,
    secret     TEXT NOT NULL,
    upload_id  TEXT NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    expires_at TEXT NOT NULL
) STRICT;
CREATE INDEX s3_grants_upload ON s3_grants (upload_id);

-- S3 multipart uploads under way, and the parts that arrived. Parts are objects of their own
-- (`s3-parts/<multipart id>/<part number>`) until the upload is completed or aborted.
CREATE TABLE s3_multipart (
    id         TEXT PRIMARY KEY,
    access_key TEXT NOT NULL REFERENCES s3_grants(access_key) ON DELETE CASCADE,
    object_key TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE s3_parts (
    multipart_id TEXT NOT NULL REFERENCES s3_multipart(id) ON DELETE CASCADE,
    part_number  INTEGER NOT NULL,
    e_tag        TEXT NOT NULL,
    size         INTEGER NOT NULL,
    PRIMARY KEY (multipart_id, part_number)
) STRICT;
