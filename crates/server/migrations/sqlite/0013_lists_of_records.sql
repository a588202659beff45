-- Lists of metadata and analyses at scale, read as lists of samples are (migration 0011): each
-- record carries its sample's owner, visibility and project, kept by the triggers below, so that
-- the parts of what a caller may see are read from the record's own indexes in the page's order;
-- analyses are counted per owner, visibility and kind (every sample has exactly one metadata
-- record, so `sample_counts` counts those).
ALTER TABLE metadata ADD COLUMN visibility TEXT;
ALTER TABLE metadata ADD COLUMN project_id TEXT;
ALTER TABLE analyses ADD COLUMN owner_id TEXT;
ALTER TABLE analyses ADD COLUMN visibility TEXT;
ALTER TABLE analyses ADD COLUMN project_id TEXT;
UPDATE metadata SET
    visibility = (SELECT s.visibility FROM samples s WHERE s.id = metadata.sample_id),
    project_id = (SELECT s.project_id FROM samples s WHERE s.id = metadata.sample_id);
UPDATE analyses SET
    owner_id = (SELECT s.owner_id FROM samples s WHERE s.id = analyses.sample_id),
    visibility = (SELECT s.visibility FROM samples s WHERE s.id = analyses.sample_id),
    project_id = (SELECT s.project_id FROM samples s WHERE s.id = analyses.sample_id);

CREATE TABLE analysis_counts (
    owner_id      TEXT NOT NULL,
    visibility    TEXT NOT NULL,
    analysis_type TEXT NOT NULL,
    n             INTEGER NOT NULL,
    PRIMARY KEY (owner_id, visibility, analysis_type)
) STRICT, WITHOUT ROWID;
CREATE INDEX analysis_counts_visibility ON analysis_counts (visibility, analysis_type, owner_id, n);
INSERT INTO analysis_counts (owner_id, visibility, analysis_type, n)
    SELECT owner_id, visibility, analysis_type, COUNT(*) FROM analyses
    WHERE owner_id IS NOT NULL GROUP BY owner_id, visibility, analysis_type;

-- A new record takes its sample's owner, visibility and project.
CREATE TRIGGER metadata_of_sample AFTER INSERT ON metadata BEGIN
    UPDATE metadata SET
        visibility = (SELECT s.visibility FROM samples s WHERE s.id = NEW.sample_id),
        project_id = (SELECT s.project_id FROM samples s WHERE s.id = NEW.sample_id)
    WHERE id = NEW.id;
END;
CREATE TRIGGER analyses_of_sample AFTER INSERT ON analyses BEGIN
    UPDATE analyses SET
        owner_id = (SELECT s.owner_id FROM samples s WHERE s.id = NEW.sample_id),
        visibility = (SELECT s.visibility FROM samples s WHERE s.id = NEW.sample_id),
        project_id = (SELECT s.project_id FROM samples s WHERE s.id = NEW.sample_id)
    WHERE id = NEW.id;
END;
-- A change of a sample reaches its records.
CREATE TRIGGER samples_reach_records AFTER UPDATE OF owner_id, visibility, project_id ON samples
    WHEN OLD.owner_id IS NOT NEW.owner_id OR OLD.visibility IS NOT NEW.visibility
        OR OLD.project_id IS NOT NEW.project_id BEGIN
    UPDATE metadata SET visibility = NEW.visibility, project_id = NEW.project_id WHERE sample_id = NEW.id;
    UPDATE analyses SET owner_id = NEW.owner_id, visibility = NEW.visibility, project_id = NEW.project_id
        WHERE sample_id = NEW.id;
END;
-- An analysis is counted once its owner and visibility are set (just after it is inserted, by
-- the trigger above), moved when they change, and taken off when it goes.
CREATE TRIGGER analysis_counts_update AFTER UPDATE OF owner_id, visibility ON analyses
    WHEN OLD.owner_id IS NOT NEW.owner_id OR OLD.visibility IS NOT NEW.visibility BEGIN
    UPDATE analysis_counts SET n = n - 1
        WHERE owner_id = OLD.owner_id AND visibility = OLD.visibility AND analysis_type = OLD.analysis_type;
    INSERT INTO analysis_counts (owner_id, visibility, analysis_type, n)
        SELECT NEW.owner_id, NEW.visibility, NEW.analysis_type, 1 WHERE NEW.owner_id IS NOT NULL
        ON CONFLICT (owner_id, visibility, analysis_type) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER analysis_counts_delete AFTER DELETE ON analyses WHEN OLD.owner_id IS NOT NULL BEGIN
    UPDATE analysis_counts SET n = n - 1
        WHERE owner_id = OLD.owner_id AND visibility = OLD.visibility AND analysis_type = OLD.analysis_type;
END;

-- The parts of each list in its default order (metadata: as made; analyses: by creation time,
-- and by kind for the lists of one kind), with what the parts test.
CREATE INDEX metadata_owner ON metadata (owner_id);
CREATE INDEX metadata_visibility ON metadata (visibility);
CREATE INDEX metadata_project ON metadata (project_id);
CREATE INDEX analyses_owner_created ON analyses (owner_id, created_at, id, visibility, project_id);
CREATE INDEX analyses_visibility_created ON analyses (visibility, created_at, id, owner_id, project_id);
CREATE INDEX analyses_project_created ON analyses (project_id, created_at, id, owner_id, visibility);
CREATE INDEX analyses_owner_kind ON analyses (owner_id, analysis_type, created_at, id, visibility);
CREATE INDEX analyses_visibility_kind ON analyses (visibility, analysis_type, created_at, id, owner_id);
PRAGMA analysis_limit = 1000;
ANALYZE;
