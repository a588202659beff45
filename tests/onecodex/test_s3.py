"""The S3-compatible upload endpoint as boto3 (the onecodex client's S3 library) meets it: wrong,
unknown, expired and out-of-grant credentials, bad signatures, small and disordered parts each
get the S3 error boto3 expects, and store nothing."""

import os
import sqlite3
import uuid

import boto3
import botocore.config
import pytest
import requests
from botocore.exceptions import ClientError

from conftest import Raw


def init(world, user="lab", filename=None):
    raw = Raw(world, user)
    body = {"filename": filename or f"s3test_{uuid.uuid4().hex[:8]}.fastq"}
    return raw.post("/api/v1/samples/init_multipart_upload", body)


def s3(world, key_id, secret):
    return boto3.session.Session().client(
        "s3",
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        endpoint_url=world["s3_endpoint"],
        region_name="us-east-1",
        config=botocore.config.Config(retries={"max_attempts": 1}),
    )


def code(e):
    return e.value.response["Error"]["Code"]


def stored_at(world, key):
    """Where the service holds a file written to `key`: in its `incoming/` folder until the
    upload's callback takes it into place, at `key` after; `None` if nowhere."""
    for prefix in (["incoming"], []):
        path = os.path.join(world["objects_dir"], *prefix, *key.split("/"))
        if os.path.exists(path):
            return path
    return None


def stored(world, key):
    return stored_at(world, key) is not None


READS = b"@r1\nACGTACGTAC\n+\nIIIIIIIIII\n"


def test_a_put_with_the_minted_credentials_is_stored(world):
    up = init(world)
    c = s3(world, up["upload_aws_access_key_id"], up["upload_aws_secret_access_key"])
    c.put_object(Bucket=up["s3_bucket"], Key=up["file_id"], Body=READS)
    assert stored(world, up["file_id"])
    assert up["expires_at"] and up["callback_url"].startswith("/api/v1/samples/upload_callback/")


def test_a_wrong_secret_is_a_bad_signature(world):
    up = init(world)
    c = s3(world, up["upload_aws_access_key_id"], "0" * 40)
    with pytest.raises(ClientError) as e:
        c.put_object(Bucket=up["s3_bucket"], Key=up["file_id"], Body=READS)
    assert code(e) == "SignatureDoesNotMatch"
    assert not stored(world, up["file_id"])


def test_an_unknown_key_is_refused(world):
    up = init(world)
    c = s3(world, "MGDS0000000000000000", up["upload_aws_secret_access_key"])
    with pytest.raises(ClientError) as e:
        c.put_object(Bucket=up["s3_bucket"], Key=up["file_id"], Body=READS)
    assert code(e) == "InvalidAccessKeyId"
    assert not stored(world, up["file_id"])


def test_a_key_outside_the_grant_is_denied(world):
    up = init(world)
    other = init(world)
    c = s3(world, up["upload_aws_access_key_id"], up["upload_aws_secret_access_key"])
    with pytest.raises(ClientError) as e:
        c.put_object(Bucket=up["s3_bucket"], Key=other["file_id"], Body=READS)
    assert code(e) == "AccessDenied"
    assert not stored(world, other["file_id"])
    with pytest.raises(ClientError) as e:
        c.put_object(Bucket="another-bucket", Key=up["file_id"], Body=READS)
    # Only the upload bucket is served; any other path is not found and stores nothing.
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] in (403, 404)


def test_expired_credentials_start_nothing(world):
    up = init(world)
    db = sqlite3.connect(world["database"], timeout=30)
    db.execute(
        "UPDATE s3_grants SET expires_at = '2000-01-01T00:00:00.000000+00:00' WHERE access_key = ?",
        (up["upload_aws_access_key_id"],),
    )
    db.commit()
    db.close()
    c = s3(world, up["upload_aws_access_key_id"], up["upload_aws_secret_access_key"])
    with pytest.raises(ClientError) as e:
        c.put_object(Bucket=up["s3_bucket"], Key=up["file_id"], Body=READS)
    assert code(e) == "ExpiredToken"
    assert not stored(world, up["file_id"])


def test_parts_too_small_or_out_of_order_are_refused(world):
    up = init(world)
    c = s3(world, up["upload_aws_access_key_id"], up["upload_aws_secret_access_key"])
    bucket, key = up["s3_bucket"], up["file_id"]
    mpu = c.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    p1 = c.upload_part(Bucket=bucket, Key=key, UploadId=mpu, PartNumber=1, Body=b"@a\nAC\n+\nII\n")
    p2 = c.upload_part(Bucket=bucket, Key=key, UploadId=mpu, PartNumber=2, Body=READS)
    parts = [{"ETag": p1["ETag"], "PartNumber": 1}, {"ETag": p2["ETag"], "PartNumber": 2}]
    with pytest.raises(ClientError) as e:
        c.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=mpu, MultipartUpload={"Parts": parts})
    assert code(e) == "EntityTooSmall"
    with pytest.raises(ClientError) as e:
        c.complete_multipart_upload(
            Bucket=bucket, Key=key, UploadId=mpu, MultipartUpload={"Parts": list(reversed(parts))}
        )
    assert code(e) == "InvalidPartOrder"
    with pytest.raises(ClientError) as e:
        c.complete_multipart_upload(
            Bucket=bucket, Key=key, UploadId=mpu, MultipartUpload={"Parts": [{"ETag": '"00"', "PartNumber": 1}]}
        )
    assert code(e) == "InvalidPart"
    assert not stored(world, key)
    c.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=mpu)
    with pytest.raises(ClientError) as e:
        c.upload_part(Bucket=bucket, Key=key, UploadId=mpu, PartNumber=3, Body=READS)
    assert code(e) == "NoSuchUpload"
    # The aborted upload's parts are gone.
    parts_dir = os.path.join(world["objects_dir"], "s3-parts")
    left = [f for _, _, fs in os.walk(parts_dir) for f in fs] if os.path.isdir(parts_dir) else []
    assert left == []


def fastq_part(tag, size):
    """FASTQ records of about `size` bytes whose names carry `tag`."""
    record = f"@{tag}\n{'ACGT' * 25}\n+\n{'I' * 100}\n".encode()
    return record * (size // len(record) + 1)


@pytest.mark.parametrize(
    "sent, listed",
    [
        ([1, 2, 3], [1, 2, 3]),  # in order: the parts are written once and renamed into place
        ([1, 2, "2b", 3], [1, 2, 3]),  # part 2 sent again
        ([2, 1, 3], [1, 2, 3]),  # out of order
        ([1, 2, 3], [1, 3]),  # a part left out of the completion
    ],
)
def test_parts_in_any_order_or_sent_again_join_as_listed(world, sent, listed):
    up = init(world)
    c = s3(world, up["upload_aws_access_key_id"], up["upload_aws_secret_access_key"])
    bucket, key = up["s3_bucket"], up["file_id"]
    mpu = c.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    mib = 1024 * 1024
    bodies = {}
    etags = {}
    for p in sent:
        n = int(str(p)[0])
        bodies[n] = fastq_part(f"part{p}", 5 * mib + 1000 if n < 3 else 10_000)
        etags[n] = c.upload_part(Bucket=bucket, Key=key, UploadId=mpu, PartNumber=n, Body=bodies[n])["ETag"]
    parts = [{"ETag": etags[n], "PartNumber": n} for n in listed]
    c.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=mpu, MultipartUpload={"Parts": parts})
    with open(stored_at(world, key), "rb") as f:
        assert f.read() == b"".join(bodies[n] for n in listed)
    parts_dir = os.path.join(world["objects_dir"], "s3-parts")
    left = [f for _, _, fs in os.walk(parts_dir) for f in fs] if os.path.isdir(parts_dir) else []
    assert left == [], "a completed upload leaves no part behind"


def test_a_callback_before_the_file_and_a_cancel_leave_nothing(world):
    raw = Raw(world, "lab")
    up = init(world)
    r = raw.session.post(
        world["base_url"] + up["callback_url"],
        json={"s3_path": f"s3://{up['s3_bucket']}/{up['file_id']}", "filename": "x.fastq"},
        timeout=60,
    )
    assert r.status_code == 400 and r.json()["code"] == "file_not_arrived", r.text
    c = s3(world, up["upload_aws_access_key_id"], up["upload_aws_secret_access_key"])
    c.put_object(Bucket=up["s3_bucket"], Key=up["file_id"], Body=READS)
    assert stored(world, up["file_id"])
    raw.post("/api/v1/samples/cancel_upload", {"sample_id": up["sample_id"]})
    assert not stored(world, up["file_id"])
    # The credentials of a cancelled upload are gone with it.
    with pytest.raises(ClientError) as e:
        c.put_object(Bucket=up["s3_bucket"], Key=up["file_id"], Body=READS)
    assert code(e) == "InvalidAccessKeyId"


def test_another_users_upload_cannot_be_confirmed(world):
    up = init(world, user="lab")
    other = Raw(world, "colleague")
    r = other.session.post(
        world["base_url"] + up["callback_url"],
        json={"s3_path": f"s3://{up['s3_bucket']}/{up['file_id']}"},
        timeout=60,
    )
    assert r.status_code == 404, r.text
