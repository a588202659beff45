-- Timestamps are written with `+00:00` instead of `Z` (Python before 3.11, which the real
-- service's clients support, reads only that form). Rewrite those stored the older way, so that
-- stored times and filter values keep comparing as text.
UPDATE organizations SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE users SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE projects SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE samples SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE samples SET updated_at = substr(updated_at, 1, length(updated_at) - 1) || '+00:00' WHERE updated_at LIKE '%Z';
UPDATE metadata SET date_collected = substr(date_collected, 1, length(date_collected) - 1) || '+00:00' WHERE date_collected LIKE '%Z';
UPDATE metadata SET date_sequenced = substr(date_sequenced, 1, length(date_sequenced) - 1) || '+00:00' WHERE date_sequenced LIKE '%Z';
UPDATE tags SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE uploads SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE uploads SET expires_at = substr(expires_at, 1, length(expires_at) - 1) || '+00:00' WHERE expires_at LIKE '%Z';
UPDATE jobs SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE analyses SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE analyses SET updated_at = substr(updated_at, 1, length(updated_at) - 1) || '+00:00' WHERE updated_at LIKE '%Z';
UPDATE job_queue SET lease_until = substr(lease_until, 1, length(lease_until) - 1) || '+00:00' WHERE lease_until LIKE '%Z';
UPDATE job_queue SET enqueued_at = substr(enqueued_at, 1, length(enqueued_at) - 1) || '+00:00' WHERE enqueued_at LIKE '%Z';
UPDATE documents SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE sequencing_batches SET created_at = substr(created_at, 1, length(created_at) - 1) || '+00:00' WHERE created_at LIKE '%Z';
UPDATE sequencing_batches SET updated_at = substr(updated_at, 1, length(updated_at) - 1) || '+00:00' WHERE updated_at LIKE '%Z';
UPDATE pending_deletes SET queued_at = substr(queued_at, 1, length(queued_at) - 1) || '+00:00' WHERE queued_at LIKE '%Z';
