-- The lab as its reports show it, set by the organisation's admins and owners: the name on the
-- covers (none: the organisation's own name, which stays the key users are placed by) and the
-- logo, as the object's key in the store (a PNG, JPEG or SVG picture of at most 2 MiB).
ALTER TABLE organizations ADD COLUMN lab_name TEXT;
ALTER TABLE organizations ADD COLUMN logo_key TEXT;
