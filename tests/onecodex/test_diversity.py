"""Diversity as the `onecodex` library computes it (its `alpha_diversity`, `beta_diversity`,
`plot_pcoa`, `alpha_diversity_stats` and `beta_diversity_stats`, over scikit-bio), against what
MGDS's diversity view shows, as the service's `POST /api/v1/diversity` answers it (the same
application code as the app's and the browser's diversity and ordination tabs and `mgds compare
--diversity`), on the same samples of the service.

The measures correspond so: onecodex's `abundance_w_children` is MGDS's share of genome copies
(`genome_copies`), and its `normalized_readcount_w_children` is MGDS's reads made shares of each
sample's total (`readcount`; MGDS always makes each sample's values shares before a beta
diversity). Alpha diversity is from the reads at the rank in both (`readcount_w_children`).
"""

import warnings

import numpy as np
import pytest

ALPHA = ["observed_taxa", "shannon", "simpson", "chao1"]
BETA = ["braycurtis", "jaccard", "weighted_unifrac", "unweighted_unifrac", "aitchison"]
MEASURES = [("abundance_w_children", "genome_copies"), ("normalized_readcount_w_children", "readcount")]


@pytest.fixture(scope="module")
def collection(ocx, world):
    from onecodex.models.collection import SampleCollection

    return SampleCollection([ocx.Samples.get(i) for i in world["diversity"]["samples"]])


def diversity(raw, world, **request):
    body = {"samples": world["diversity"]["samples"], "rank": "species", **request}
    return raw.post("/api/v1/diversity", body)


def test_alpha_diversity_is_onecodex_s(collection, raw, world):
    ours = diversity(raw, world)
    assert [s["id"] for s in ours["samples"]] == world["diversity"]["samples"]
    by_metric = {a["metric"]: a["values"] for a in ours["alpha"]}
    for metric in ALPHA:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # onecodex deprecates Chao1
            theirs = collection.alpha_diversity(metric="readcount_w_children", rank="species", diversity_metric=metric)
        assert np.allclose(by_metric[metric], theirs.values.ravel(), rtol=0, atol=1e-9), metric


@pytest.mark.parametrize("theirs_measure,our_measure", MEASURES)
@pytest.mark.parametrize("metric", BETA)
def test_beta_diversity_is_onecodex_s(collection, raw, world, metric, theirs_measure, our_measure):
    ours = diversity(raw, world, metric=metric, measure=our_measure)
    theirs = collection.beta_diversity(metric=theirs_measure, rank="species", diversity_metric=metric)
    assert ours["measure"] == our_measure
    d = np.array(ours["distances"])
    assert d.shape == theirs.data.shape
    assert np.abs(d - theirs.data).max() <= 1e-9, (metric, np.abs(d - theirs.data).max())
    # The samples are in the same order (onecodex names them by their classifications).
    assert len(set(theirs.ids)) == len(world["diversity"]["samples"])


def test_the_ordination_is_onecodex_s_pcoa(collection, raw, world):
    ours = diversity(raw, world, metric="braycurtis", measure="genome_copies")
    chart = collection.plot_pcoa(
        rank="species", metric="abundance_w_children", diversity_metric="braycurtis", return_chart=True
    )
    theirs = chart.data
    coords = np.array(ours["ordination"]["coordinates"])
    shares = ours["ordination"]["proportion_explained"]
    assert shares[0] > shares[1] > shares[2], "the first axes have distinct eigenvalues"
    for k, column in enumerate(["PC1", "PC2"]):
        # plot_pcoa draws each axis scaled to at most 1 (after rounding distances to 6
        # decimals), and an axis's sign is arbitrary.
        mine = coords[:, k] / np.abs(coords[:, k]).max()
        them = theirs[column].to_numpy(dtype=float)
        if np.dot(mine, them) < 0:
            mine = -mine
        assert np.abs(mine - them).max() <= 1e-3, (column, mine, them)


def test_the_group_tests_are_onecodex_s(collection, raw, world):
    group_by = world["diversity"]["group_by"]
    ours = diversity(raw, world, group_by=group_by, metric="braycurtis", measure="genome_copies")
    shannon = next(a for a in ours["alpha"] if a["metric"] == "shannon")
    theirs = collection.alpha_diversity_stats(
        group_by=group_by, metric="readcount_w_children", rank="species", diversity_metric="shannon"
    )
    assert shannon["test"]["p_value"] == pytest.approx(theirs.pvalue, abs=1e-12)
    permanova = collection.beta_diversity_stats(
        group_by=group_by, metric="abundance_w_children", rank="species", diversity_metric="braycurtis"
    )
    # onecodex draws its permutations without a seed, so only the statistic is the same; the
    # p-value with a seed is checked against scikit-bio's in `skbio_diversity.py`.
    assert ours["permanova"]["statistic"] == pytest.approx(permanova.statistic, abs=1e-9)
    assert permanova.num_permutations == 999 and "999 permutations" in ours["permanova"]["method"]
    # A sample without the field is left out of both tests, as onecodex leaves it out.
    assert sum(g["samples"] for g in ours["permanova"]["groups"]) == permanova.sample_size
