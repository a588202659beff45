-- Claims of an analysis (a worker took it) apart from its failed attempts (its engine failed in
-- a way that may pass): a worker that dies while an engine process runs is not the analysis's
-- fault, so it is bounded separately and more loosely.
ALTER TABLE job_queue ADD COLUMN claims INTEGER NOT NULL DEFAULT 0;
UPDATE job_queue SET claims = attempts;
