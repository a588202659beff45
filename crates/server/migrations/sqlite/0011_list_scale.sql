-- Lists at scale. A list reads the samples a caller may see in parts (their own, others' public
-- ones, ...), each through an index in the order of the page, so that no list scans the table or
-- sorts all it may see; and its total comes from counts kept as data.

-- How many samples each owner has of each visibility, kept by the triggers below in the same
-- transaction as the change, so that a list's X-Total-Count is a sum over a few rows.
CREATE TABLE sample_counts (
    owner_id   TEXT NOT NULL,
    visibility TEXT NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (owner_id, visibility)
) STRICT, WITHOUT ROWID;
CREATE INDEX sample_counts_visibility ON sample_counts (visibility, owner_id, n);

CREATE TRIGGER sample_counts_insert AFTER INSERT ON samples BEGIN
    INSERT INTO sample_counts (owner_id, visibility, n) VALUES (NEW.owner_id, NEW.visibility, 1)
        ON CONFLICT (owner_id, visibility) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sample_counts_delete AFTER DELETE ON samples BEGIN
    UPDATE sample_counts SET n = n - 1 WHERE owner_id = OLD.owner_id AND visibility = OLD.visibility;
END;
CREATE TRIGGER sample_counts_update AFTER UPDATE OF owner_id, visibility ON samples
    WHEN OLD.owner_id IS NOT NEW.owner_id OR OLD.visibility IS NOT NEW.visibility BEGIN
    UPDATE sample_counts SET n = n - 1 WHERE owner_id = OLD.owner_id AND visibility = OLD.visibility;
    INSERT INTO sample_counts (owner_id, visibility, n) VALUES (NEW.owner_id, NEW.visibility, 1)
        ON CONFLICT (owner_id, visibility) DO UPDATE SET n = n + 1;
END;
INSERT INTO sample_counts (owner_id, visibility, n)
    SELECT owner_id, visibility, COUNT(*) FROM samples GROUP BY owner_id, visibility;

-- Each part of a list in each order a screen asks for (created, size, file name), with the
-- columns the parts test, so that counting and paging read the index alone.
DROP INDEX samples_owner;
DROP INDEX samples_visibility;
DROP INDEX samples_project;
CREATE INDEX samples_owner_created ON samples (owner_id, created_at, id, visibility, project_id);
CREATE INDEX samples_visibility_created ON samples (visibility, created_at, id, owner_id, project_id);
CREATE INDEX samples_project_created ON samples (project_id, created_at, id, owner_id, visibility);
CREATE INDEX samples_owner_size ON samples (owner_id, size, id, visibility, project_id);
CREATE INDEX samples_visibility_size ON samples (visibility, size, id, owner_id, project_id);
CREATE INDEX samples_owner_filename ON samples (owner_id, filename, id, visibility, project_id);
CREATE INDEX samples_visibility_filename ON samples (visibility, filename, id, owner_id, project_id);

-- What the planner knows of the new indexes (a sample of each, quick at any size), so that a
-- filter that names few rows (a tag, a project) is read from its side; the service refreshes it
-- as the data grows (`PRAGMA optimize`, when a connection opens and from the janitor).
PRAGMA analysis_limit = 1000;
ANALYZE;
