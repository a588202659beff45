-- The parts of an S3 multipart upload that arrive in order (as boto3 and mgds send them) are
-- appended to one assembly file, which becomes the object at completion without a second copy.
-- A multipart upload's assembly holds parts 1 to assembly_parts, assembly_bytes bytes; a part's
-- assembly_offset says where it starts there (NULL: a file of its own, sent out of order or again).
ALTER TABLE s3_multipart ADD COLUMN assembly_parts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE s3_multipart ADD COLUMN assembly_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE s3_parts ADD COLUMN assembly_offset INTEGER;
