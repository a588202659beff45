-- Uploads through `init_multipart_upload` that go straight to an S3 store able to mint
-- credentials (Garage, through its admin API): each has a bucket of its own in the store, and a
-- key that may only write there. The row outlives its upload on purpose: the bucket and key are
-- removed once the upload is confirmed, canceled or abandoned, and a row left behind by a crash
-- is finished at the next sweep.
CREATE TABLE upload_buckets (
    upload_id  TEXT PRIMARY KEY,
    -- The bucket's name in the store (a global alias), chosen before it is made.
    bucket     TEXT NOT NULL,
    -- The store's id for the bucket and for the upload's key, once they exist.
    bucket_id  TEXT,
    key_id     TEXT,
    created_at TEXT NOT NULL
) STRICT;
