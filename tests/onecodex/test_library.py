"""The `onecodex` Python library against MGDS: what a lab's scripts and notebooks call, with the
values compared to the service's own answers."""

import gzip
import io
import pathlib
import time

import pytest
import requests

from conftest import Raw, ident, make_api


def ids(objs):
    return sorted(ident(o) for o in objs)


# --- Samples ------------------------------------------------------------------------------


def test_samples_all_is_every_sample_the_service_lists(ocx, raw):
    # More than one page of the client's 100: the cursor pages must all arrive.
    assert ids(ocx.Samples.all()) == ids(raw.all("/api/v1/samples"))
    assert len(ocx.Samples.all()) > 100


def test_samples_where_filters_as_the_service_does(ocx, raw, world):
    s = world["samples"]
    public = ocx.Samples.where(visibility="public")
    assert ids(public) == ids(raw.all("/api/v1/samples", where='{"visibility": "public"}'))
    assert s["public"] in ids(public)

    tagged = ocx.Samples.where(tags=[world["tag"]["name"]])
    assert ids(tagged) == sorted([s["tagged"]])

    in_project = ocx.Samples.where(project=world["project"]["id"])
    raw_in_project = raw.all("/api/v1/samples", where='{"project": "%s"}' % world["project"]["id"])
    assert ids(in_project) == ids(raw_in_project)
    assert s["in_project"] in ids(in_project) and s["awaiting_for_python"] in ids(in_project)

    by_name = ocx.Samples.where(name=world["sample_names"]["classified"])
    assert ids(by_name) == [s["classified"]]

    by_external_id = ocx.Samples.where(external_sample_id=world["external_ids"]["awaiting"])
    assert ids(by_external_id) == [s["awaiting"]]

    since = ocx.Samples.where(created_at={"$gte": "2000-01-01T00:00:00+00:00"})
    assert len(since) == len(ocx.Samples.all())
    assert ocx.Samples.where(created_at={"$gte": "2999-01-01T00:00:00+00:00"}) == []

    newest_first = ocx.Samples.where(sort="created_at", limit=5)
    raw_newest = raw.get("/api/v1/samples", sort='{"created_at": true}', per_page=5)
    assert [x.id for x in newest_first] == [ident(x) for x in raw_newest]
    oldest_first = ocx.Samples.where(sort="^created_at", limit=3)
    assert [x.created_at for x in oldest_first] == sorted(x.created_at for x in oldest_first)

    two = ocx.Samples.where(s["classified"], s["public"])
    assert ids(two) == sorted([s["classified"], s["public"]])

    organization = ocx.Samples.where(organization=True)
    assert ids(organization) == ids(raw.all("/api/v1/samples/organization"))
    assert s["classified"] in ids(organization)


def test_a_sample_its_metadata_tags_and_project(ocx, raw, world):
    s = ocx.Samples.get(world["samples"]["tagged"])
    assert s is not None and s.id == world["samples"]["tagged"]
    mine = raw.get(f"/api/v1/samples/{s.id}")
    assert s.filename == mine["filename"] and s.size == mine["size"] and s.visibility == mine["visibility"]
    assert [t.name for t in s.tags] == [world["tag"]["name"]]
    meta = raw.get(f"/api/v1/metadata/{ident(mine['metadata'])}")
    assert s.metadata.name == meta["name"]
    assert s.metadata.platform == meta["platform"]

    p = ocx.Samples.get(world["samples"]["in_project"])
    assert p.project is not None and p.project.id == world["project"]["id"]
    assert p.project.project_name == world["project"]["project_name"]
    assert ocx.Samples.get("0123456789abcdef") is None


def test_metadata_edited_and_saved_reaches_the_service(ocx, raw, world):
    s = ocx.Samples.get(world["samples"]["classified"])
    m = s.metadata
    m.description = "re-sequenced after QC"
    m.custom = {"plate": "P7", "well": "B3"}
    m.save()
    meta = raw.get(f"/api/v1/metadata/{m.id}")
    assert meta["description"] == "re-sequenced after QC"
    assert meta["custom"] == {"plate": "P7", "well": "B3"}


def test_an_awaiting_sample_is_listed_but_not_downloadable(ocx, world):
    s = ocx.Samples.get(world["samples"]["awaiting"])
    assert s.visibility == "awaiting data"
    with pytest.raises(Exception):
        s.download(path="/dev/null")


def test_a_sample_downloads_byte_for_byte(ocx, world, tmp_path):
    s = ocx.Samples.get(world["samples"]["classified"])
    out = tmp_path / "reads.fastq.gz"
    s.download(path=str(out))
    assert out.read_bytes() == pathlib.Path(world["files"]["reads"]).read_bytes()


# --- Uploads ------------------------------------------------------------------------------


def test_a_single_file_upload_with_metadata_tags_and_project(ocx, raw, world):
    before = len(raw.all("/api/v1/samples"))
    s = ocx.Samples.upload(
        world["files"]["small_single"],
        metadata={"name": "upload from python", "platform": "Illumina MiSeq", "custom": {"plate": "P9"}},
        tags=[{"name": "python-upload"}],
        project=world["project"]["id"],
    )
    assert s is not None
    mine = raw.get(f"/api/v1/samples/{s.id}")
    assert mine["filename"] == pathlib.Path(world["files"]["small_single"]).name
    assert mine["size"] == pathlib.Path(world["files"]["small_single"]).stat().st_size
    assert ident(mine["project"]) == world["project"]["id"]
    meta = raw.get(f"/api/v1/metadata/{ident(mine['metadata'])}")
    assert meta["name"] == "upload from python" and meta["custom"] == {"plate": "P9"}
    tags = [raw.get(f"/api/v1/tags/{ident(t)}")["name"] for t in mine["tags"]]
    assert tags == ["python-upload"]
    assert len(raw.all("/api/v1/samples")) == before + 1


def test_a_big_file_goes_up_in_parts(ocx, raw, world):
    # Over boto3's 8 MiB threshold: CreateMultipartUpload, UploadPart x2, Complete.
    path = world["files"]["big_single"]
    s = ocx.Samples.upload(path)
    mine = raw.get(f"/api/v1/samples/{s.id}")
    assert mine["size"] == pathlib.Path(path).stat().st_size
    uri = raw.post(f"/api/v1/samples/{s.id}/download_uri")["download_uri"]
    assert requests.get(uri, timeout=60).content == pathlib.Path(path).read_bytes()


def test_a_paired_upload_becomes_one_sample(ocx, raw, world):
    r1, r2 = world["files"]["pair"]
    before = len(raw.all("/api/v1/samples"))
    s = ocx.Samples.upload((r1, r2))
    assert len(raw.all("/api/v1/samples")) == before + 1
    # The service's worker joins the two files into the sample's one file: importing until then.
    for _ in range(300):
        if raw.get(f"/api/v1/samples/{s.id}")["visibility"] != "importing":
            break
        time.sleep(0.1)
    assert raw.get(f"/api/v1/samples/{s.id}")["visibility"] == "private"
    uri = raw.post(f"/api/v1/samples/{s.id}/download_uri")["download_uri"]
    text = gzip.decompress(requests.get(uri, timeout=60).content).decode()
    reads = text.splitlines()[0::4]
    expected = sum(1 for _ in open(r1)) // 4
    assert len(reads) == 2 * expected
    assert reads[0].split()[0] == reads[1].split()[0], "read 1 is followed by its mate"


def test_a_pre_uploaded_sample_gets_its_file(ocx, raw, world):
    target = world["samples"]["awaiting_for_python"]
    s = ocx.Samples.upload(world["files"]["small_single_2"], sample_id=target)
    assert s.id == target
    assert raw.get(f"/api/v1/samples/{target}")["visibility"] != "awaiting data"


# --- Analyses and results ---------------------------------------------------------------


def test_classifications_and_their_results(ocx, raw, world):
    a = world["analyses"]
    assert ids(ocx.Classifications.all()) == ids(raw.all("/api/v1/classifications"))
    c = ocx.Classifications.get(a["classification"])
    assert c.success is True and c.job.name == raw.get(f"/api/v1/jobs/{ident(raw.get('/api/v1/classifications/' + c.id)['job'])}")["name"]
    mine = raw.get(f"/api/v1/classifications/{c.id}/results")
    assert c.results() == mine
    table = c.table()
    assert len(table) == len(mine["table"])
    assert table["readcount"].sum() == sum(r["readcount"] for r in mine["table"])
    by_sample = ocx.Classifications.where(sample=world["samples"]["classified"])
    assert a["classification"] in ids(by_sample)


def test_the_read_level_file_downloads(ocx, raw, world):
    c = ocx.Classifications.get(world["analyses"]["classification"])
    url = c._readlevel()["url"]
    body = requests.get(url, timeout=60)
    assert body.status_code == 200
    rows = gzip.decompress(body.content).decode().splitlines()
    assert len(rows) > 1
    results = raw.get(f"/api/v1/classifications/{c.id}/results")
    assert len(rows) - 1 == results["n_reads"]


def test_a_failed_classification_says_why(ocx, world):
    c = ocx.Classifications.get(world["analyses"]["failed"])
    assert c.complete is True and c.success is False and c.error_msg


def test_to_df_gives_the_services_species_abundances(ocx, raw, world):
    samples = ocx.Samples.where(world["samples"]["classified"])
    df = samples.to_df(rank="species", metric="abundance_w_children")
    c = world["analyses"]["classification"]
    mine = raw.get(f"/api/v1/classifications/{c}/results")
    species = {r["tax_id"]: r["abundance_w_children"] for r in mine["table"] if r["rank"] == "species"}
    row = df.iloc[0]
    for tax_id, value in species.items():
        if value:
            assert row[tax_id] == pytest.approx(value, rel=1e-9)
    top = samples.to_df(rank="species", top_n=2)
    assert len(top.columns) <= 3  # the two most abundant and, at most, "Other"


def test_plot_bargraph_returns_a_chart(ocx, world):
    import altair

    samples = ocx.Samples.where(world["samples"]["classified"])
    chart = samples.plot_bargraph(rank="species", return_chart=True)
    assert isinstance(chart, (altair.Chart, altair.LayerChart, altair.VConcatChart, altair.HConcatChart))


def test_jobs_analyses_panels_alignments_and_functional_profiles(ocx, raw, world):
    assert sorted(j.name for j in ocx.Jobs.all()) == sorted(j["name"] for j in raw.all("/api/v1/jobs"))
    assert ids(ocx.Analyses.all()) == ids(raw.all("/api/v1/analyses"))
    a = world["analyses"]
    panel = ocx.Panels.get(a["panel"])
    assert panel.results() == raw.get(f"/api/v1/panels/{panel.id}/results")
    alignment = ocx.Alignments.get(a["alignment"])
    assert alignment.results() == raw.get(f"/api/v1/alignments/{alignment.id}/results")
    files = alignment.get_files()
    assert files and all(f.size > 0 for f in files)
    profile = ocx.FunctionalProfiles.get(a["functional_profile"])
    assert profile.results() == raw.get(f"/api/v1/functional_profiles/{profile.id}/results")


# --- Documents, tags, projects, users ------------------------------------------------------


def test_documents_shared_listed_uploaded_and_downloaded(world, tmp_path):
    colleague = make_api(world, "colleague")
    shared = world["document"]
    listed = colleague.Documents.all()
    assert shared["id"] in ids(listed)
    doc = colleague.Documents.get(shared["id"])
    assert doc.filename == shared["filename"]
    assert doc.uploader.email == world["users"]["lab"]["email"]
    out = tmp_path / "shared.txt"
    doc.download(path=str(out))
    assert out.read_bytes() == pathlib.Path(world["files"]["document"]).read_bytes()

    lab = make_api(world, "lab")
    new = lab.Documents.upload(world["files"]["report"])
    assert new is not None
    mine = Raw(world, "lab").get(f"/api/v1/documents/{new.id}")
    assert mine["size"] == pathlib.Path(world["files"]["report"]).stat().st_size
    back = tmp_path / "report.back"
    lab.Documents.get(new.id).download(path=str(back))
    assert back.read_bytes() == pathlib.Path(world["files"]["report"]).read_bytes()


def test_tags_projects_and_users(ocx, raw, world):
    assert sorted(t.name for t in ocx.Tags.all()) == sorted(t["name"] for t in raw.all("/api/v1/tags"))
    assert [t.id for t in ocx.Tags.where(name=world["tag"]["name"])] == [world["tag"]["id"]]
    projects = ocx.Projects.all()
    assert ids(projects) == ids(raw.all("/api/v1/projects"))
    p = ocx.Projects.get(world["project"]["id"])
    assert p.project_name == world["project"]["project_name"] and "can_see_files" in p.permissions
    assert [x.id for x in ocx.Projects.where(name=world["project"]["name"])] == [world["project"]["id"]]
    me = ocx.Users.get(world["users"]["lab"]["id"])
    assert me.email == world["users"]["lab"]["email"]
    # The colleague is a member of the project: the lab sees the colleague's address.
    assert world["users"]["colleague"]["id"] in ids(ocx.Users.all())
