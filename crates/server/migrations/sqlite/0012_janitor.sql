-- Leases of the install's background work (the janitor's rounds): one host at a time does it,
-- whichever takes the lease; a host that dies holding it lets it lapse.
CREATE TABLE leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  TEXT NOT NULL
) STRICT;

-- A sample's deletion finds the uploads made for it by this index, whatever else is stale.
CREATE INDEX uploads_target_sample ON uploads (target_sample);
