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

CREATE FUNCTION sample_counts_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE sample_counts SET n = n - 1 WHERE owner_id = OLD.owner_id AND visibility = OLD.visibility;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO sample_counts (owner_id, visibility, n) VALUES (NEW.owner_id, NEW.visibility, 1)
            ON CONFLICT (owner_id, visibility) DO UPDATE SET n = sample_counts.n + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER sample_counts_insert_delete AFTER INSERT OR DELETE ON samples
    FOR EACH ROW EXECUTE FUNCTION sample_counts_change();
CREATE TRIGGER sample_counts_update AFTER UPDATE OF owner_id, visibility ON samples
    FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id OR OLD.visibility IS DISTINCT FROM NEW.visibility)
    EXECUTE FUNCTION sample_counts_change();
INSERT INTO sample_counts (owner_id, visibility, n)
    SELECT owner_id, visibility, COUNT(*) FROM samples GROUP BY owner_id, visibility;
