-- Leases of the install's background work: see the SQLite migration 0012.
-- (The index of uploads by target sample is built online: `postgres-online/indexes.sql`.)
CREATE TABLE leases (
    name   TEXT COLLATE "C" PRIMARY KEY,
    holder TEXT COLLATE "C" NOT NULL,
    until  TEXT COLLATE "C" NOT NULL
);
