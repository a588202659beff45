"""scikit-bio's figures for the abundance tables of the diversity checks (crates/cli/tests/it/diversity.rs).

Reads a JSON case from argv[1] and prints scikit-bio's (and SciPy's) answers as JSON, computed
as the onecodex library computes them: each sample's values made shares of its total, UniFrac
over the taxonomy with every branch of length 1 (shares times 1e10 as counts), Aitchison with
multiplicative replacement and scikit-learn's Euclidean distances, PCoA by `eigh`, PERMANOVA
with the case's seed. Undefined values are null.

Case: {"samples": [...], "taxa": [...], "rows": [[...], ...] (samples x taxa, counts),
       "parents": {tax_id: parent or null}, "groups": [...], "permutations": N, "seed": S}
"""

import json
import math
import sys
import warnings

import numpy as np
import skbio.diversity as skd
from scipy.stats import kruskal, mannwhitneyu
from skbio.stats.composition import clr, multi_replace
from skbio.stats.distance import DistanceMatrix, permanova
from skbio.stats.ordination import pcoa
from skbio.tree import TreeNode
from sklearn.metrics.pairwise import euclidean_distances

warnings.simplefilter("ignore")


def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def lineage(t, parents):
    out = [t]
    while out[-1] != "1":
        p = parents.get(out[-1])
        if p is None or p in out:
            out.append("1")
            break
        out.append(p)
    return out


def tree_of(taxa, parents):
    """The onecodex library's tree: every node a branch of length 1, under a root of length 0."""
    keep = {a for t in taxa for a in lineage(t, parents)}
    nodes = {n: TreeNode(name=n, length=1) for n in keep}
    for n in sorted(keep):
        path = lineage(n, parents)
        if len(path) > 1:
            nodes[path[1]].append(nodes[n])
    root = TreeNode(name="fake root")
    root.append(nodes["1"])
    return root


def main():
    case = json.load(open(sys.argv[1]))
    ids, taxa = case["samples"], case["taxa"]
    counts = np.array(case["rows"], dtype=float)
    totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    out = {"alpha": {}, "beta": {}}

    for key, name in [("observed_taxa", "sobs"), ("shannon", "shannon"), ("simpson", "simpson"), ("chao1", "chao1")]:
        out["alpha"][key] = skd.alpha_diversity(name, counts, ids).tolist()

    for key in ["braycurtis", "jaccard"]:
        x = shares > 0 if key == "jaccard" else shares
        dm = skd.beta_diversity(key, x, ids, validate=False).data
        out["beta"][key] = np.nan_to_num(dm, nan=0.0).tolist()  # two empty samples: 0, as onecodex
    tree = tree_of(taxa, case["parents"])
    whole = np.trunc(shares * 1e10).astype(np.int64)
    out["beta"]["weighted_unifrac"] = skd.beta_diversity(
        "weighted_unifrac", whole, ids, tree=tree, taxa=taxa, normalized=True, validate=False
    ).data.tolist()
    out["beta"]["unweighted_unifrac"] = skd.beta_diversity(
        "unweighted_unifrac", whole, ids, tree=tree, taxa=taxa, validate=False
    ).data.tolist()
    present = shares[:, shares.sum(axis=0) > 0]
    if (present.sum(axis=1) > 0).all():
        z = clr(multi_replace(present))
        a = euclidean_distances(z, z)
        np.fill_diagonal(a, 0.0)
        a = np.triu(a) + np.triu(a, 1).T
        out["beta"]["aitchison"] = a.tolist()

    out["pcoa"] = {}
    for key, dm in out["beta"].items():
        o = pcoa(DistanceMatrix(np.array(dm), ids))
        out["pcoa"][key] = {
            "eigenvalues": o.eigvals.values.tolist(),
            "proportion_explained": o.proportion_explained.values.tolist(),
            "coordinates": o.samples.values.tolist(),
        }

    bc = DistanceMatrix(np.array(out["beta"]["braycurtis"]), ids)
    r = permanova(bc, case["groups"], permutations=case["permutations"], seed=case["seed"])
    out["permanova"] = {"pseudo_f": r["test statistic"], "p_value": r["p-value"]}

    shannon = out["alpha"]["shannon"]
    by = {}
    for g, v in zip(case["groups"], shannon):
        if v is not None and not math.isnan(v):
            by.setdefault(g, []).append(v)
    labels = sorted(g for g in by if len(by[g]) >= 2)
    vals = [by[g] for g in labels]
    if len(labels) == 2:
        u = mannwhitneyu(vals[0], vals[1])
        out["group_test"] = {"test": "mann_whitney", "statistic": u.statistic, "p_value": u.pvalue}
    elif len(labels) > 2:
        k = kruskal(*vals)
        out["group_test"] = {"test": "kruskal_wallis", "statistic": k.statistic, "p_value": k.pvalue}
    json.dump(clean(out), sys.stdout)


if __name__ == "__main__":
    main()
