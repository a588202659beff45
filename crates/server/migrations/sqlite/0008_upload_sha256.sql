-- The SHA-256 an upload's file was declared with at init_upload (hex), which its form carries and
-- its store checks; NULL when none was given.
ALTER TABLE uploads ADD COLUMN sha256 TEXT;
