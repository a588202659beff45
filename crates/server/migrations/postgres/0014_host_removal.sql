-- A sample made from another by removing its host reads (`POST /samples/{id}/remove_host`)
-- waits as an import whose file is the source sample's own: `host_of` names the
-- classification whose read-level results say which reads are the host's, `host_tax_ids` the
-- host's taxa with everything below them (a JSON array, fixed when asked), and
-- `host_readlevel_key` where those results are stored. The source's file is never removed
-- with the import.
ALTER TABLE imports ADD COLUMN host_of TEXT COLLATE "C";
ALTER TABLE imports ADD COLUMN host_tax_ids TEXT COLLATE "C";
ALTER TABLE imports ADD COLUMN host_readlevel_key TEXT COLLATE "C";
