-- The people a user looked up by their exact e-mail address (to share a project or document
-- with them): the one who looked may see them from then on. Nothing else about a user is
-- learned from an id.
CREATE TABLE user_contacts (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    contact_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    found_at TEXT NOT NULL,
    PRIMARY KEY (user_id, contact_id)
);
