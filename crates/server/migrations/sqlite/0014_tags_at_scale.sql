-- Lists of tags at scale: a tag is seen by its owner and with any sample the caller sees that
-- carries it. Each link of a tag to a sample carries the sample's owner, visibility and project
-- (kept by triggers, as metadata records do, migration 0013), so that whether a tag is on a
-- sample the caller sees is a few index lookups of the tag's links, not a read of all of them.
ALTER TABLE sample_tags ADD COLUMN owner_id TEXT;
ALTER TABLE sample_tags ADD COLUMN visibility TEXT;
ALTER TABLE sample_tags ADD COLUMN project_id TEXT;
UPDATE sample_tags SET
    owner_id = (SELECT s.owner_id FROM samples s WHERE s.id = sample_tags.sample_id),
    visibility = (SELECT s.visibility FROM samples s WHERE s.id = sample_tags.sample_id),
    project_id = (SELECT s.project_id FROM samples s WHERE s.id = sample_tags.sample_id);
CREATE TRIGGER sample_tags_of_sample AFTER INSERT ON sample_tags BEGIN
    UPDATE sample_tags SET
        owner_id = (SELECT s.owner_id FROM samples s WHERE s.id = NEW.sample_id),
        visibility = (SELECT s.visibility FROM samples s WHERE s.id = NEW.sample_id),
        project_id = (SELECT s.project_id FROM samples s WHERE s.id = NEW.sample_id)
    WHERE sample_id = NEW.sample_id AND tag_id = NEW.tag_id;
END;
CREATE TRIGGER samples_reach_tags AFTER UPDATE OF owner_id, visibility, project_id ON samples
    WHEN OLD.owner_id IS NOT NEW.owner_id OR OLD.visibility IS NOT NEW.visibility
        OR OLD.project_id IS NOT NEW.project_id BEGIN
    UPDATE sample_tags SET owner_id = NEW.owner_id, visibility = NEW.visibility, project_id = NEW.project_id
        WHERE sample_id = NEW.id;
END;
DROP INDEX sample_tags_tag;
CREATE INDEX sample_tags_tag_visibility ON sample_tags (tag_id, visibility, owner_id);
CREATE INDEX sample_tags_tag_owner ON sample_tags (tag_id, owner_id);
CREATE INDEX sample_tags_tag_project ON sample_tags (tag_id, project_id);
ANALYZE sample_tags;
