#!/usr/bin/env python3
"""Checks of the generated files; prints a report (make.sh writes it to out/CHECK.txt).

- read counts per source and species;
- panel markers vs reads: minimap2 -x sr, then per marker coverage (% bases with depth >= 1),
  mean depth and identity (% covered bases whose majority read base is the marker's), the same
  measures as MGDS's long-marker report;
- panel markers vs every read source (minimap2 -x asm20): no absent marker may be found;
- demo gene catalogue vs reads: the same measures per gene, with the gene's functions, and the reads
  per function (what a functional profile of the demo reads should show); catalogue genes vs every
  read source, as for the panel;
- shared canonical k-mers (k = 31 and 35) between reference sequences of related species.
"""
import collections
import gzip
import os
import subprocess
import sys

OUT = sys.argv[1]
SIM = os.path.join(os.path.dirname(OUT), "sim")


def fasta(path):
    op = gzip.open if path.endswith(".gz") else open
    name, buf = None, []
    with op(path, "rt") as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                if name:
                    yield name, "".join(buf)
                name, buf = line[1:].split()[0], []
            elif line:
                buf.append(line)
    if name:
        yield name, "".join(buf)


def pileup(refs_path, reads_path):
    """minimap2 -x sr of the reads to the references (primary alignments): per reference, its
    sequence, the read count and the read bases seen at each position."""
    refs = dict(fasta(refs_path))
    sam = subprocess.run(["minimap2", "-ax", "sr", "--secondary=no", "-t", "2", refs_path, reads_path],
                         capture_output=True, text=True, check=True).stdout
    counts = {m: [collections.Counter() for _ in s] for m, s in refs.items()}
    nreads = collections.Counter()
    for line in sam.split("\n"):
        if not line or line.startswith("@"):
            continue
        fl = line.split("\t")
        flag, ref = int(fl[1]), fl[2]
        if flag & 0x904 or ref == "*":
            continue
        nreads[ref] += 1
        pos, cigar, seq = int(fl[3]) - 1, fl[5], fl[9]
        num, qi = "", 0
        for c in cigar:
            if c.isdigit():
                num += c
                continue
            n = int(num)
            num = ""
            if c in "M=X":
                for k in range(n):
                    if 0 <= pos + k < len(counts[ref]):
                        counts[ref][pos + k][seq[qi + k]] += 1
                pos += n
                qi += n
            elif c in "IS":
                qi += n
            elif c in "DN":
                pos += n
    return refs, counts, nreads


def measures(seq, counts):
    """Coverage % (bases with depth >= 1), mean depth, identity % (covered bases whose majority read
    base is the reference's) and minimum depth."""
    cov = [c for c in counts if c]
    depth = sum(sum(c.values()) for c in counts) / len(seq)
    ident = (sum(1 for i, c in enumerate(counts) if c and c.most_common(1)[0][0] == seq[i])
             / len(cov) * 100) if cov else 0.0
    mind = min(sum(c.values()) for c in counts)
    return 100 * len(cov) / len(seq), depth, ident, mind


def main():
    demo, panel, functions = (os.path.join(OUT, d) for d in ("demo", "panel", "functions"))
    reads = os.path.join(demo, "reads.fastq.gz")
    print("== files")
    for root in (demo, os.path.join(demo, "taxonomy"), panel, functions):
        for fn in sorted(os.listdir(root)):
            p = os.path.join(root, fn)
            if os.path.isfile(p):
                print(f"{os.path.relpath(p, OUT)}\t{os.path.getsize(p)} bytes")

    print("\n== reads per source (truth.tsv)")
    by_src, by_tax = collections.Counter(), collections.Counter()
    with open(os.path.join(demo, "truth.tsv")) as f:
        next(f)
        for line in f:
            _, tax, src = line.rstrip("\n").split("\t")
            by_src[src] += 1
            by_tax[tax] += 1
    total = sum(by_src.values())
    for src, n in by_src.most_common():
        print(f"{src}\t{n}\t{100 * n / total:.1f}%")
    print(f"total\t{total}")
    print("\n== reads per species tax id")
    for tax, n in by_tax.most_common():
        print(f"{tax}\t{n}\t{100 * n / total:.1f}%")

    print("\n== panel markers vs reads (minimap2 -x sr, primary alignments)")
    expect = dict(l.split("\t")[0:3:2] for l in open(os.path.join(SIM, "panel_expect.tsv")).read().split("\n") if l)
    markers, counts, nreads = pileup(os.path.join(panel, "amr_genes.fasta"), reads)
    print("marker\tlength\texpected\treads\tcoverage%\tmean_depth\tidentity%\tmin_depth")
    for m, s in markers.items():
        cov, depth, ident, mind = measures(s, counts[m])
        print(f"{m}\t{len(s)}\t{expect.get(m)}\t{nreads[m]}\t{cov:.1f}\t{depth:.1f}\t{ident:.2f}\t{mind}")

    print("\n== demo gene catalogue vs reads (minimap2 -x sr, primary alignments)")
    gene_functions = collections.defaultdict(list)
    with open(os.path.join(functions, "annotations.tsv")) as f:
        next(f)
        for line in f:
            g, fid, _ = line.rstrip("\n").split("\t")
            gene_functions[g].append(fid)
    genes, counts, nreads = pileup(os.path.join(functions, "genes.fa"), reads)
    print("gene\tlength\tfunctions\treads\tcoverage%\tmean_depth\tidentity%")
    per_function = collections.Counter()
    for g, s in genes.items():
        cov, depth, ident, _ = measures(s, counts[g])
        print(f"{g}\t{len(s)}\t{','.join(gene_functions[g]) or '-'}\t{nreads[g]}\t{cov:.1f}\t{depth:.1f}\t{ident:.2f}")
        for fid in gene_functions[g]:
            per_function[fid] += nreads[g]
    print(f"reads on catalogue genes\t{sum(nreads.values())}")
    print(f"reads on genes with a function\t{sum(n for g, n in nreads.items() if gene_functions[g])}")
    for fid, n in sorted(per_function.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{fid}\t{n} reads")

    srcs = [os.path.join(SIM, f) for f in sorted(os.listdir(SIM)) if f.endswith(".fa")]
    cat = os.path.join(SIM, "all_sources.fasta")
    with open(cat, "w") as w:
        for p in srcs:
            w.write(open(p).read())
    for what, path in (("panel markers", os.path.join(panel, "amr_genes.fasta")),
                       ("catalogue genes", os.path.join(functions, "genes.fa"))):
        print(f"\n== {what} vs read sources (minimap2 -x asm20, hits covering >= 50% of a {what[:-1]})")
        paf = subprocess.run(["minimap2", "-c", "-x", "asm20", "-N", "20", cat, path],
                             capture_output=True, text=True, check=True).stdout
        for line in paf.split("\n"):
            if not line:
                continue
            f = line.split("\t")
            qlen, qs, qe, match, alen = int(f[1]), int(f[2]), int(f[3]), int(f[9]), int(f[10])
            if (qe - qs) >= 0.5 * qlen:
                print(f"{f[0]}\t{qs}-{qe}/{qlen}\t{f[5]}:{f[7]}-{f[8]}\t{f[4]}\tidentity {100 * match / alen:.2f}%")

    print("\n== shared canonical k-mers between reference sequences")
    seqs = dict(fasta(os.path.join(demo, "genomes.fa.gz")))
    comp = str.maketrans("ACGT", "TGCA")

    def kmers(s, k):
        out = set()
        for i in range(len(s) - k + 1):
            w = s[i:i + k]
            r = w.translate(comp)[::-1]
            out.add(min(w, r))
        return out

    pairs = [("Escherichia_coli_536.chr", "Klebsiella_pneumoniae_HS11286.chr"),
             ("Escherichia_coli_536.chr", "Vibrio_cholerae_N16961.chr"),
             ("Mycobacterium_tuberculosis_H37Rv.chr", "Mycobacterium_leprae_TN.chr"),
             ("Staphylococcus_aureus_N315.chr", "Streptococcus_suis_SC84.chr"),
             ("Escherichia_coli_536.chr", "Escherichia_phage_lambda.genome")]
    for k in (31, 35):
        ks = {n: kmers(s, k) for n, s in seqs.items()}
        for a, b in pairs:
            print(f"k={k}\t{a} / {b}\t{len(ks[a] & ks[b])} shared")
    # held-out strain vs its species' reference fragment
    held = dict(fasta(os.path.join(SIM, "Escherichia_coli_DH1_heldout.fa")))["Escherichia_coli_DH1_heldout"]
    for k in (31, 35):
        h = kmers(held, k)
        r = kmers(seqs["Escherichia_coli_536.chr"], k)
        print(f"k={k}\theld-out E. coli DH1 k-mers also in E. coli 536 fragment: {100 * len(h & r) / len(h):.1f}%")


main()
