#!/usr/bin/env python3
"""Merges ART's per-source FASTQ files into one shuffled reads.fastq.gz with a truth table.

usage: merge_reads.py PLAN.tsv OUT.fastq.gz TRUTH.tsv
Reads are renamed demo.00001... after a shuffle with a fixed seed.
"""
import gzip
import random
import sys

plan, out_fq, out_truth = sys.argv[1:4]
reads = []
for line in open(plan):
    src, fa, fold, seed, taxid = line.rstrip("\n").split("\t")
    fq = fa[:-3] + ".fq"
    with open(fq) as f:
        while True:
            h = f.readline()
            if not h:
                break
            s, _, q = f.readline().strip(), f.readline(), f.readline().strip()
            assert h.startswith("@") and len(s) == len(q) == 150, (fq, h)
            reads.append((s, q, taxid, src))
random.Random(20251125).shuffle(reads)
with gzip.GzipFile(out_fq, "wb", mtime=0) as gz, open(out_truth, "w") as t:
    t.write("read_name\ttax_id\tsource\n")
    for i, (s, q, taxid, src) in enumerate(reads, 1):
        name = f"demo.{i:05d}"
        gz.write(f"@{name}\n{s}\n+\n{q}\n".encode())
        t.write(f"{name}\t{taxid}\t{src}\n")
print(f"{len(reads)} reads", file=sys.stderr)
