-- The lab's logo on its reports' covers: the object's key in the store (a PNG, JPEG or SVG
-- picture of at most 2 MiB), set by the organisation's admins and owners.
ALTER TABLE organizations ADD COLUMN logo_key TEXT;
