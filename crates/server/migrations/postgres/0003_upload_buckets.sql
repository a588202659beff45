-- Uploads that go straight to an S3 store able to mint credentials (see the SQLite migration
-- 0009): a bucket and a write-only key of their own in the store, removed once the upload ends.
CREATE TABLE upload_buckets (
    upload_id  TEXT COLLATE "C" PRIMARY KEY,
    bucket     TEXT COLLATE "C" NOT NULL,
    bucket_id  TEXT COLLATE "C",
    key_id     TEXT COLLATE "C",
    created_at TEXT COLLATE "C" NOT NULL
);
