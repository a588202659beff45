-- Lists at scale: counts of samples per owner and visibility kept as data (see the SQLite
-- migration 0011). The indexes the lists read are built without blocking a live install, after
-- the migrations (`migrations/postgres-online/`, run by `store::db`).
CREATE TABLE sample_counts (
    owner_id   TEXT COLLATE "C" NOT NULL,
    visibility TEXT COLLATE "C" NOT NULL,
    n          BIGINT NOT NULL,
    PRIMARY KEY (owner_id, visibility)
);
CREATE INDEX sample_counts_visibility ON sample_counts (visibility, owner_id) INCLUDE (n);

-- Kept per statement, from the rows it changed (transition tables), so that a statement that
-- writes many samples updates each count once rather than once a row.
CREATE FUNCTION sample_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sample_counts (owner_id, visibility, n)
        SELECT owner_id, visibility, COUNT(*) FROM changed_new GROUP BY owner_id, visibility
        ON CONFLICT (owner_id, visibility) DO UPDATE SET n = sample_counts.n + excluded.n;
    RETURN NULL;
END
$$;
CREATE FUNCTION sample_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sample_counts c SET n = c.n - d.k
        FROM (SELECT owner_id, visibility, COUNT(*) AS k FROM changed_old GROUP BY owner_id, visibility) d
        WHERE c.owner_id = d.owner_id AND c.visibility = d.visibility;
    RETURN NULL;
END
$$;
CREATE FUNCTION sample_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sample_counts c SET n = c.n - d.k
        FROM (SELECT o.owner_id, o.visibility, COUNT(*) AS k FROM changed_old o JOIN changed_new w ON w.id = o.id
              WHERE o.owner_id <> w.owner_id OR o.visibility <> w.visibility GROUP BY o.owner_id, o.visibility) d
        WHERE c.owner_id = d.owner_id AND c.visibility = d.visibility;
    INSERT INTO sample_counts (owner_id, visibility, n)
        SELECT w.owner_id, w.visibility, COUNT(*) FROM changed_old o JOIN changed_new w ON w.id = o.id
        WHERE o.owner_id <> w.owner_id OR o.visibility <> w.visibility GROUP BY w.owner_id, w.visibility
        ON CONFLICT (owner_id, visibility) DO UPDATE SET n = sample_counts.n + excluded.n;
    RETURN NULL;
END
$$;
CREATE TRIGGER sample_counts_insert AFTER INSERT ON samples
    REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION sample_counts_add();
CREATE TRIGGER sample_counts_delete AFTER DELETE ON samples
    REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION sample_counts_remove();
CREATE TRIGGER sample_counts_update AFTER UPDATE ON samples
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION sample_counts_move();
INSERT INTO sample_counts (owner_id, visibility, n)
    SELECT owner_id, visibility, COUNT(*) FROM samples GROUP BY owner_id, visibility;
