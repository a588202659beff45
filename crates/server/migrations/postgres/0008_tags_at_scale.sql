-- Lists of tags at scale: see the SQLite migration 0014. The indexes are built online.
ALTER TABLE sample_tags ADD COLUMN owner_id TEXT COLLATE "C";
ALTER TABLE sample_tags ADD COLUMN visibility TEXT COLLATE "C";
ALTER TABLE sample_tags ADD COLUMN project_id TEXT COLLATE "C";
UPDATE sample_tags st SET owner_id = s.owner_id, visibility = s.visibility, project_id = s.project_id
    FROM samples s WHERE s.id = st.sample_id;
CREATE FUNCTION sample_tags_of_sample() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT s.owner_id, s.visibility, s.project_id INTO NEW.owner_id, NEW.visibility, NEW.project_id
        FROM samples s WHERE s.id = NEW.sample_id;
    RETURN NEW;
END
$$;
CREATE TRIGGER sample_tags_of_sample BEFORE INSERT ON sample_tags FOR EACH ROW EXECUTE FUNCTION sample_tags_of_sample();
CREATE FUNCTION samples_reach_tags() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sample_tags st SET owner_id = w.owner_id, visibility = w.visibility, project_id = w.project_id
        FROM changed_old o JOIN changed_new w ON w.id = o.id
        WHERE st.sample_id = w.id AND (o.owner_id <> w.owner_id OR o.visibility <> w.visibility
          OR o.project_id IS DISTINCT FROM w.project_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER samples_reach_tags AFTER UPDATE ON samples
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION samples_reach_tags();
