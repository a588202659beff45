#!/usr/bin/env python3
"""Builds the demo gene catalogue for functional profiles (assets/functions/demo): real
antimicrobial-resistance genes of NCBI's Reference Gene Catalog with the enzyme classes (EC numbers,
IUBMB accepted names) of their products.

usage: catalogue.py DL_DIR OUT_DIR

Reads pyabricate 0.1.0's db/ncbi.json.gz (ABRicate's 'ncbi' database) from DL_DIR, writes
OUT_DIR/functions/genes.fa and OUT_DIR/functions/annotations.tsv, and checks that the genes it shares
with the demo panel (OUT_DIR/panel/amr_genes.fasta, written by build.py) are the same sequences.
Nothing is random here.
"""
import gzip
import json
import os
import re
import sys

DL, OUT = sys.argv[1:3]
DOC = os.path.join

# ---------------------------------------------------------------------------------------------
# Functions: EC number and IUBMB accepted name (in ASCII: Greek letters spelled out, the long dash
# of a ligase's name written "--"). Only products with an established enzyme class carry one.
# ---------------------------------------------------------------------------------------------
BETA_LACTAMASE = ("EC:3.5.2.6", "beta-lactamase")
STREPTOMYCIN_6_KINASE = ("EC:2.7.1.72", "streptomycin 6-kinase")
STREPTOMYCIN_3PP_KINASE = ("EC:2.7.1.87", "streptomycin 3''-kinase")
AAC6P = ("EC:2.3.1.82", "aminoglycoside N6'-acetyltransferase")
AAC3 = ("EC:2.3.1.81", "aminoglycoside N3-acetyltransferase")
STREPTOMYCIN_ADENYLYLTRANSFERASE = ("EC:2.7.7.47", "streptomycin 3''-adenylyltransferase")
KANAMYCIN_KINASE = ("EC:2.7.1.95", "kanamycin kinase")
DHPS = ("EC:2.5.1.15", "dihydropteroate synthase")
DHFR = ("EC:1.5.1.3", "dihydrofolate reductase")
CAT = ("EC:2.3.1.28", "chloramphenicol O-acetyltransferase")
ERM = ("EC:2.1.1.184", "23S rRNA (adenine2085-N6)-dimethyltransferase")
MACROLIDE_KINASE = ("EC:2.7.1.136", "macrolide 2'-kinase")
VANA = ("EC:6.1.2.1", "D-alanine--(R)-lactate ligase")
GST = ("EC:2.5.1.18", "glutathione transferase")
MCR = ("EC:2.7.8.43", "lipid A phosphoethanolamine transferase")
DALA_DIPEPTIDASE = ("EC:3.4.13.22", "D-Ala-D-Ala dipeptidase")
DALA_CARBOXYPEPTIDASE = ("EC:3.4.17.14", "zinc D-Ala-D-Ala carboxypeptidase")

# ---------------------------------------------------------------------------------------------
# Genes: (NCBI gene symbol, NCBI accession, functions). The first four are on K. pneumoniae
# HS11286's plasmid pKPHS3, so the demo reads carry them; they and the panel's six other genes use
# the demo panel's accessions. Where a symbol has several nucleotide entries, the one whose product
# name matches the symbol, then the lowest accession, is taken. Efflux pumps, ribosomal protection
# and Qnr proteins are not enzymes: they carry no function.
# ---------------------------------------------------------------------------------------------
GENES = [
    ("blaTEM-1", "NG_050145.1", [BETA_LACTAMASE]),
    ("aph(6)-Id", "NG_047464.1", [STREPTOMYCIN_6_KINASE]),
    ("aph(3'')-Ib", "NG_056002.2", [STREPTOMYCIN_3PP_KINASE]),
    ("sul2", "NG_051852.1", [DHPS]),
    ("blaSHV-1", "NG_049989.1", [BETA_LACTAMASE]),
    ("blaCTX-M-15", "NG_048935.1", [BETA_LACTAMASE]),
    ("blaKPC-2", "NG_049253.1", [BETA_LACTAMASE]),
    ("blaOXA-48", "NG_049762.1", [BETA_LACTAMASE]),
    ("blaNDM-1", "NG_049326.1", [BETA_LACTAMASE]),
    ("blaCMY-2", "NG_048814.1", [BETA_LACTAMASE]),
    ("aac(6')-Ib-cr", "NG_052213.1", [AAC6P]),
    ("aac(3)-IId", "NG_047251.1", [AAC3]),
    ("aadA1", "NG_047324.1", [STREPTOMYCIN_ADENYLYLTRANSFERASE]),
    ("aph(3')-Ia", "NG_047429.1", [KANAMYCIN_KINASE]),
    ("sul1", "NG_048081.1", [DHPS]),
    ("sul3", "NG_048120.1", [DHPS]),
    ("dfrA1", "NG_047676.1", [DHFR]),
    ("dfrA17", "NG_047709.1", [DHFR]),
    ("catA1", "NG_047582.1", [CAT]),
    ("erm(B)", "NG_047793.1", [ERM]),
    ("mph(A)", "NG_047985.1", [MACROLIDE_KINASE]),
    ("vanA", "NG_048324.1", [VANA]),
    # One product, two activities (NCBI: "D-Ala-D-Ala dipeptidase/D-Ala-D-Ala carboxypeptidase").
    ("vanXY-c2/3", "NG_048508.1", [DALA_DIPEPTIDASE, DALA_CARBOXYPEPTIDASE]),
    ("fosA", "NG_050405.1", [GST]),
    ("mcr-1.1", "NG_050417.1", [MCR]),
    ("tet(A)", "NG_048148.1", []),
    ("tet(M)", "NG_048211.1", []),
    ("floR", "NG_047860.1", []),
    ("qnrS1", "NG_050543.1", []),
]


def gene_id(symbol):
    """The symbol as a FASTA and SAM reference name: parentheses dropped, each prime written `p`,
    a slash written `_` (`aph(3'')-Ib` -> `aph3pp-Ib`, `tet(A)` -> `tetA`)."""
    out = symbol.replace("(", "").replace(")", "").replace("'", "p").replace("/", "_")
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", out), symbol
    return out


def wrap(seq, width=80):
    return "\n".join(seq[i:i + width] for i in range(0, len(seq), width))


def fasta(path):
    recs, name, buf = {}, None, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                if name:
                    recs[name] = "".join(buf)
                name, buf = line[1:].split()[0], []
            elif line:
                buf.append(line)
    if name:
        recs[name] = "".join(buf)
    return recs


def main():
    db = json.load(gzip.open(DOC(DL, "pypi/pyabricate/pyabricate/db/ncbi.json.gz"), "rt"))
    by_acc = {g["accession"]: g for g in db["genes"]}
    panel = fasta(DOC(OUT, "panel", "amr_genes.fasta"))
    out = DOC(OUT, "functions")
    os.makedirs(out, exist_ok=True)
    ids, names = set(), {}
    with open(DOC(out, "genes.fa"), "w") as fa, open(DOC(out, "annotations.tsv"), "w") as tsv:
        tsv.write("gene_id\tfunction_id\tfunction_name\n")
        for symbol, acc, functions in GENES:
            g = by_acc[acc]
            assert g["name"] == symbol, (symbol, acc, g["name"])
            seq = g["sequence"].upper()
            assert set(seq) <= set("ACGT"), symbol
            assert symbol not in panel or panel[symbol] == seq, f"{symbol}: not the panel's sequence"
            gid = gene_id(symbol)
            assert gid not in ids, gid
            ids.add(gid)
            fa.write(f">{gid} {g['description']} [{symbol}; NCBI Reference Gene Catalog {acc}]\n{wrap(seq)}\n")
            for fid, name in functions:
                assert names.setdefault(fid, name) == name, fid
                tsv.write(f"{gid}\t{fid}\t{name}\n")
    print(f"catalogue: {len(GENES)} genes, {len(names)} functions, "
          f"{sum(1 for g in GENES if not g[2])} genes with no function", file=sys.stderr)


if __name__ == "__main__":
    main()
