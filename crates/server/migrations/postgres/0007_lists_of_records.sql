-- Lists of metadata and analyses at scale: see the SQLite migration 0013. Their indexes are
-- built online (`postgres-online/indexes.sql`).
ALTER TABLE metadata ADD COLUMN visibility TEXT COLLATE "C";
ALTER TABLE metadata ADD COLUMN project_id TEXT COLLATE "C";
ALTER TABLE analyses ADD COLUMN owner_id TEXT COLLATE "C";
ALTER TABLE analyses ADD COLUMN visibility TEXT COLLATE "C";
ALTER TABLE analyses ADD COLUMN project_id TEXT COLLATE "C";
UPDATE metadata m SET visibility = s.visibility, project_id = s.project_id FROM samples s WHERE s.id = m.sample_id;
UPDATE analyses a SET owner_id = s.owner_id, visibility = s.visibility, project_id = s.project_id
    FROM samples s WHERE s.id = a.sample_id;

CREATE TABLE analysis_counts (
    owner_id      TEXT COLLATE "C" NOT NULL,
    visibility    TEXT COLLATE "C" NOT NULL,
    analysis_type TEXT COLLATE "C" NOT NULL,
    n             BIGINT NOT NULL,
    PRIMARY KEY (owner_id, visibility, analysis_type)
);
CREATE INDEX analysis_counts_visibility ON analysis_counts (visibility, analysis_type, owner_id) INCLUDE (n);
INSERT INTO analysis_counts (owner_id, visibility, analysis_type, n)
    SELECT owner_id, visibility, analysis_type, COUNT(*) FROM analyses
    WHERE owner_id IS NOT NULL GROUP BY owner_id, visibility, analysis_type;

-- A new record takes its sample's owner, visibility and project.
CREATE FUNCTION metadata_of_sample() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT s.visibility, s.project_id INTO NEW.visibility, NEW.project_id FROM samples s WHERE s.id = NEW.sample_id;
    RETURN NEW;
END
$$;
CREATE TRIGGER metadata_of_sample BEFORE INSERT ON metadata FOR EACH ROW EXECUTE FUNCTION metadata_of_sample();
CREATE FUNCTION analyses_of_sample() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT s.owner_id, s.visibility, s.project_id INTO NEW.owner_id, NEW.visibility, NEW.project_id
        FROM samples s WHERE s.id = NEW.sample_id;
    RETURN NEW;
END
$$;
CREATE TRIGGER analyses_of_sample BEFORE INSERT ON analyses FOR EACH ROW EXECUTE FUNCTION analyses_of_sample();

-- A change of samples reaches their records, once per statement.
CREATE FUNCTION samples_reach_records() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE metadata m SET visibility = w.visibility, project_id = w.project_id
        FROM changed_old o JOIN changed_new w ON w.id = o.id
        WHERE m.sample_id = w.id
          AND (o.visibility <> w.visibility OR o.project_id IS DISTINCT FROM w.project_id);
    UPDATE analyses a SET owner_id = w.owner_id, visibility = w.visibility, project_id = w.project_id
        FROM changed_old o JOIN changed_new w ON w.id = o.id
        WHERE a.sample_id = w.id AND (o.owner_id <> w.owner_id OR o.visibility <> w.visibility
          OR o.project_id IS DISTINCT FROM w.project_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER samples_reach_records AFTER UPDATE ON samples
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION samples_reach_records();

-- Counts of analyses, once per statement.
CREATE FUNCTION analysis_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO analysis_counts (owner_id, visibility, analysis_type, n)
        SELECT owner_id, visibility, analysis_type, COUNT(*) FROM changed_new WHERE owner_id IS NOT NULL
        GROUP BY owner_id, visibility, analysis_type
        ON CONFLICT (owner_id, visibility, analysis_type) DO UPDATE SET n = analysis_counts.n + excluded.n;
    RETURN NULL;
END
$$;
CREATE FUNCTION analysis_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE analysis_counts c SET n = c.n - d.k
        FROM (SELECT owner_id, visibility, analysis_type, COUNT(*) AS k FROM changed_old
              WHERE owner_id IS NOT NULL GROUP BY owner_id, visibility, analysis_type) d
        WHERE c.owner_id = d.owner_id AND c.visibility = d.visibility AND c.analysis_type = d.analysis_type;
    RETURN NULL;
END
$$;
CREATE FUNCTION analysis_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE analysis_counts c SET n = c.n - d.k
        FROM (SELECT o.owner_id, o.visibility, o.analysis_type, COUNT(*) AS k
              FROM changed_old o JOIN changed_new w ON w.id = o.id
              WHERE o.owner_id IS NOT NULL
                AND (o.owner_id IS DISTINCT FROM w.owner_id OR o.visibility IS DISTINCT FROM w.visibility)
              GROUP BY o.owner_id, o.visibility, o.analysis_type) d
        WHERE c.owner_id = d.owner_id AND c.visibility = d.visibility AND c.analysis_type = d.analysis_type;
    INSERT INTO analysis_counts (owner_id, visibility, analysis_type, n)
        SELECT w.owner_id, w.visibility, w.analysis_type, COUNT(*)
        FROM changed_old o JOIN changed_new w ON w.id = o.id
        WHERE w.owner_id IS NOT NULL
          AND (o.owner_id IS DISTINCT FROM w.owner_id OR o.visibility IS DISTINCT FROM w.visibility)
        GROUP BY w.owner_id, w.visibility, w.analysis_type
        ON CONFLICT (owner_id, visibility, analysis_type) DO UPDATE SET n = analysis_counts.n + excluded.n;
    RETURN NULL;
END
$$;
CREATE TRIGGER analysis_counts_insert AFTER INSERT ON analyses
    REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION analysis_counts_add();
CREATE TRIGGER analysis_counts_delete AFTER DELETE ON analyses
    REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION analysis_counts_remove();
CREATE TRIGGER analysis_counts_update AFTER UPDATE ON analyses
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION analysis_counts_move();
