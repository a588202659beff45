-- A list of metadata filtered by platform (the field a lab filters its records by most: which
-- instrument made the reads) is counted from these indexes alone, part by part (see 0013),
-- instead of reading every record the caller sees. Filters on the other fields read the
-- matching part's records.
CREATE INDEX metadata_owner_platform ON metadata (owner_id, platform);
CREATE INDEX metadata_visibility_platform ON metadata (visibility, platform, owner_id);

-- A list of documents is read in parts too (the caller's own, those shared with them, the
-- organisation's for its admins); the own part in the default order from this index.
CREATE INDEX documents_uploader_created ON documents (uploader_id, created_at, id);
DROP INDEX documents_uploader;
