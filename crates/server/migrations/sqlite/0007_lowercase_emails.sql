-- E-mail addresses are stored in lower case (ASCII), so that they compare without regard to case
-- by plain equality, as on PostgreSQL (the column's NOCASE collation made them unique that way
-- already, so no two collide).
UPDATE users SET email = lower(email);
