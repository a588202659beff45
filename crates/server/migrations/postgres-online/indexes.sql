-- Indexes built after the migrations, each `CONCURRENTLY` so that a live install keeps writing
-- while they are built (PostgreSQL refuses that inside a migration's transaction). Each
-- statement is run on its own, in order, on every start; one left invalid by an interrupted
-- build is dropped and built again. The key columns of an order say NULLS FIRST, as the lists'
-- orders do (empty values first going up), so that an index serves both directions.

-- The parts of a list of samples (see the SQLite migration 0011).
CREATE INDEX CONCURRENTLY IF NOT EXISTS samples_owner_created ON samples (owner_id, created_at NULLS FIRST, id NULLS FIRST) INCLUDE (visibility, project_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS samples_visibility_created ON samples (visibility, created_at NULLS FIRST, id NULLS FIRST) INCLUDE (owner_id, project_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS samples_project_created ON samples (project_id, created_at NULLS FIRST, id NULLS FIRST) INCLUDE (owner_id, visibility);
CREATE INDEX CONCURRENTLY IF NOT EXISTS samples_owner_size ON samples (owner_id, size NULLS FIRST, id NULLS FIRST) INCLUDE (visibility, project_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS samples_visibility_size ON samples (visibility, size NULLS FIRST, id NULLS FIRST) INCLUDE (owner_id, project_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS samples_owner_filename ON samples (owner_id, filename NULLS FIRST, id NULLS FIRST) INCLUDE (visibility, project_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS samples_visibility_filename ON samples (visibility, filename NULLS FIRST, id NULLS FIRST) INCLUDE (owner_id, project_id);
DROP INDEX CONCURRENTLY IF EXISTS samples_owner;
DROP INDEX CONCURRENTLY IF EXISTS samples_visibility;
DROP INDEX CONCURRENTLY IF EXISTS samples_project;

-- A sample's deletion finds the uploads made for it by this index, whatever else is stale.
CREATE INDEX CONCURRENTLY IF NOT EXISTS uploads_target_sample ON uploads (target_sample);

-- The parts of lists of metadata and analyses (see the SQLite migration 0013).
CREATE INDEX CONCURRENTLY IF NOT EXISTS metadata_owner_made ON metadata (owner_id, rowid NULLS FIRST, id NULLS FIRST);
CREATE INDEX CONCURRENTLY IF NOT EXISTS metadata_visibility_made ON metadata (visibility, rowid NULLS FIRST, id NULLS FIRST) INCLUDE (owner_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS metadata_project_made ON metadata (project_id, rowid NULLS FIRST, id NULLS FIRST) INCLUDE (owner_id, visibility);
-- A list of metadata filtered by platform is counted from these alone (see the SQLite migration
-- 0015).
CREATE INDEX CONCURRENTLY IF NOT EXISTS metadata_owner_platform ON metadata (owner_id, platform);
CREATE INDEX CONCURRENTLY IF NOT EXISTS metadata_visibility_platform ON metadata (visibility, platform) INCLUDE (owner_id);
-- The own part of a list of documents, in the default order.
CREATE INDEX CONCURRENTLY IF NOT EXISTS documents_uploader_created ON documents (uploader_id, created_at NULLS FIRST, id NULLS FIRST);
DROP INDEX CONCURRENTLY IF EXISTS documents_uploader;
CREATE INDEX CONCURRENTLY IF NOT EXISTS analyses_owner_created ON analyses (owner_id, created_at NULLS FIRST, id NULLS FIRST) INCLUDE (visibility, project_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS analyses_visibility_created ON analyses (visibility, created_at NULLS FIRST, id NULLS FIRST) INCLUDE (owner_id, project_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS analyses_project_created ON analyses (project_id, created_at NULLS FIRST, id NULLS FIRST) INCLUDE (owner_id, visibility);
CREATE INDEX CONCURRENTLY IF NOT EXISTS analyses_owner_kind ON analyses (owner_id, analysis_type, created_at NULLS FIRST, id NULLS FIRST) INCLUDE (visibility);
CREATE INDEX CONCURRENTLY IF NOT EXISTS analyses_visibility_kind ON analyses (visibility, analysis_type, created_at NULLS FIRST, id NULLS FIRST) INCLUDE (owner_id);

-- Whether a tag is on a sample the caller sees (see the SQLite migration 0014).
CREATE INDEX CONCURRENTLY IF NOT EXISTS sample_tags_tag_visibility ON sample_tags (tag_id, visibility, owner_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS sample_tags_tag_owner ON sample_tags (tag_id, owner_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS sample_tags_tag_project ON sample_tags (tag_id, project_id);
DROP INDEX CONCURRENTLY IF EXISTS sample_tags_tag;
