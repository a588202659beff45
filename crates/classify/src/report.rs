//! Kraken 2's `--report`: one line per taxon with reads, in a depth-first walk of the taxonomy.
//!
//! Line format: percentage of all fragments in the clade (`%6.2f`), fragments in the clade,
//! fragments at the taxon, rank code, tax id, and the name indented two spaces a level. An
//! `unclassified` line comes first when any fragment is unclassified.
//!
//! Children are visited by clade count, largest first. Kraken 2 orders them with the C++
//! library's `std::sort`, which is not stable: children with equal counts come out in an order
//! that depends on the sorting algorithm once a taxon has more than 16 children. The sort here
//! is that algorithm (libstdc++'s introsort, as Kraken 2 builds on Linux), so ties come out in
//! the same order and the report matches Kraken 2's line for line.

use std::fmt::Write as _;

use crate::database::Database;
use crate::taxonomy::Taxonomy;

/// Fragments (a pair counts once) per taxon: what a Kraken 2-style report is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KrakenReport {
    direct: Vec<u64>,
    total: u64,
}

impl KrakenReport {
    pub(crate) fn new(taxa: usize) -> KrakenReport {
        KrakenReport { direct: vec![0; taxa], total: 0 }
    }

    /// Counts one fragment, called at `taxon` (a flat index) or unclassified.
    pub(crate) fn add(&mut self, taxon: Option<u32>) {
        self.total += 1;
        if let Some(t) = taxon {
            self.direct[t as usize] += 1;
        }
    }

    /// Reads the counts back from a Kraken 2 report (`kraken2 --report`, or
    /// [`KrakenReport::render`]) over `taxonomy`: each line's tax id and reads at the taxon
    /// itself. Lines of tax ids the taxonomy lacks are an error.
    pub fn parse(text: &str, taxonomy: &Taxonomy) -> Result<KrakenReport, String> {
        let mut report = KrakenReport::new(taxonomy.len());
        let mut classified = 0u64;
        let mut unclassified = 0u64;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            let bad = || format!("line {}: not a Kraken 2 report line", i + 1);
            if f.len() < 6 {
                return Err(bad());
            }
            let direct: u64 = f[2].trim().parse().map_err(|_| bad())?;
            let tax_id: u64 = f[4].trim().parse().map_err(|_| bad())?;
            if f[3].trim() == "U" && tax_id == 0 {
                unclassified = direct;
                continue;
            }
            let t = taxonomy
                .index_of(tax_id)
                .ok_or_else(|| format!("line {}: tax id {tax_id} is not in the taxonomy", i + 1))?;
            report.direct[t as usize] += direct;
            classified += direct;
        }
        report.total = classified + unclassified;
        Ok(report)
    }

    /// Fragments classified.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Fragments left unclassified (including calls voided by the minimum hit groups).
    pub fn unclassified(&self) -> u64 {
        self.total - self.direct.iter().sum::<u64>()
    }

    /// Fragments called at each taxon (by flat index).
    pub fn direct(&self) -> &[u64] {
        &self.direct
    }

    /// The report as Kraken 2 writes it (`kraken2 --report`) for this database.
    pub fn render(&self, db: &Database) -> String {
        self.render_with(db.taxonomy(), false)
    }

    /// The report over `taxonomy`; with `zero_counts`, every taxon is listed, as Kraken 2's
    /// `--report-zero-counts` does.
    ///
    /// Rank codes follow Kraken 2's rule ([`Taxonomy::rank_codes`]). (Debian 12's Kraken 2.1.2
    /// prints the codes of the top levels wrongly, an empty code for the root: a defect of that
    /// build, not a rule.)
    pub fn render_with(&self, taxonomy: &Taxonomy, zero_counts: bool) -> String {
        let n = taxonomy.len();
        let parents = taxonomy.parents_slice();
        let mut clade = self.direct.clone();
        clade.resize(n, 0);
        for i in (1..n).rev() {
            clade[parents[i] as usize] += clade[i];
        }
        let codes = taxonomy.rank_codes();
        let (offsets, list) = taxonomy.children();
        let mut out = String::new();
        let total = self.total;
        let line = |out: &mut String, clade: u64, direct: u64, code: &str, tax_id: u64, depth: usize, name: &str| {
            let pct = 100.0 * clade as f64 / total as f64;
            let pct = if pct.is_nan() { "   nan".to_owned() } else { format!("{pct:6.2}") };
            // Kraken 2 prints the tax id as a 32-bit unsigned number.
            let _ = writeln!(out, "{pct}\t{clade}\t{direct}\t{code}\t{}\t{}{name}", tax_id as u32, "  ".repeat(depth));
        };
        let unclassified = self.unclassified();
        if unclassified > 0 || zero_counts {
            line(&mut out, unclassified, unclassified, "U", 0, 0, "unclassified");
        }
        if n == 0 {
            return out;
        }
        // Depth-first from the root, children by clade count.
        let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
        let mut kids = Vec::new();
        while let Some((t, depth)) = stack.pop() {
            let i = t as usize;
            if !zero_counts && clade[i] == 0 {
                continue;
            }
            line(
                &mut out,
                clade[i],
                self.direct.get(i).copied().unwrap_or(0),
                &codes[i],
                taxonomy.tax_id(t),
                depth,
                taxonomy.name(t),
            );
            kids.clear();
            kids.extend_from_slice(&list[offsets[i] as usize..offsets[i + 1] as usize]);
            gcc_sort(&mut kids, |&a, &b| clade[a as usize] > clade[b as usize]);
            stack.extend(kids.iter().rev().map(|&c| (c, depth + 1)));
        }
        out
    }
}

/// libstdc++'s `std::sort` (introsort: median-of-three quicksort down to runs of 16, heap sort
/// past the depth limit, then insertion sort), with `less(a, b)` meaning "a goes before b".
pub(crate) fn gcc_sort<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = v.len();
    if n < 2 {
        return;
    }
    let depth = 2 * (usize::BITS - 1 - n.leading_zeros()) as usize;
    introsort(v, 0, n, depth, &less);
    if n > THRESHOLD {
        insertion_sort(v, 0, THRESHOLD, &less);
        for i in THRESHOLD..n {
            unguarded_linear_insert(v, i, &less);
        }
    } else {
        insertion_sort(v, 0, n, &less);
    }
}

const THRESHOLD: usize = 16;

fn introsort<T: Copy>(v: &mut [T], first: usize, mut last: usize, mut depth: usize, less: &impl Fn(&T, &T) -> bool) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_sort(v, first, last, less);
            return;
        }
        depth -= 1;
        let mid = first + (last - first) / 2;
        move_median_to_first(v, first, first + 1, mid, last - 1, less);
        let cut = unguarded_partition(v, first + 1, last, first, less);
        introsort(v, cut, last, depth, less);
        last = cut;
    }
}

fn move_median_to_first<T: Copy>(
    v: &mut [T],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let m = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, m);
}

fn unguarded_partition<T: Copy>(
    v: &mut [T],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &impl Fn(&T, &T) -> bool,
) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn heap_sort<T: Copy>(v: &mut [T], first: usize, mut last: usize, less: &impl Fn(&T, &T) -> bool) {
    let len = last - first;
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[first + parent];
            adjust_heap(v, first, parent, len, value, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    while last - first > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[first];
        adjust_heap(v, first, 0, last - first, value, less);
    }
}

fn adjust_heap<T: Copy>(
    v: &mut [T],
    first: usize,
    mut hole: usize,
    len: usize,
    value: T,
    less: &impl Fn(&T, &T) -> bool,
) {
    let top = hole;
    let mut second = hole;
    while second < (len - 1) / 2 {
        second = 2 * (second + 1);
        if less(&v[first + second], &v[first + second - 1]) {
            second -= 1;
        }
        v[first + hole] = v[first + second];
        hole = second;
    }
    if len.is_multiple_of(2) && second == (len - 2) / 2 {
        second = 2 * (second + 1);
        v[first + hole] = v[first + second - 1];
        hole = second - 1;
    }
    // Push the value back up.
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(&v[first + parent], &value) {
            break;
        }
        v[first + hole] = v[first + parent];
        hole = parent;
    }
    v[first + hole] = value;
}

fn insertion_sort<T: Copy>(v: &mut [T], first: usize, last: usize, less: &impl Fn(&T, &T) -> bool) {
    for i in first + 1..last {
        if less(&v[i], &v[first]) {
            let value = v[i];
            v.copy_within(first..i, first + 1);
            v[first] = value;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn unguarded_linear_insert<T: Copy>(v: &mut [T], mut last: usize, less: &impl Fn(&T, &T) -> bool) {
    let value = v[last];
    let mut next = last - 1;
    while less(&value, &v[next]) {
        v[last] = v[next];
        last = next;
        next -= 1;
    }
    v[last] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_a_sort() {
        let mut state = 1u64;
        for n in [0usize, 1, 2, 5, 16, 17, 40, 100, 1000] {
            let mut v: Vec<u32> = (0..n)
                .map(|_| {
                    state = crate::kmer::mix64(state + 1);
                    (state % 13) as u32
                })
                .collect();
            let mut expected = v.clone();
            expected.sort_by(|a, b| b.cmp(a));
            gcc_sort(&mut v, |a, b| a > b);
            assert_eq!(v, expected, "{n}");
        }
    }

    #[test]
    fn ties_come_out_as_libstdcxx_orders_them() {
        // 40 children in id order with tied counts: libstdc++ (g++ 12) gives this order.
        let counts: Vec<u32> = (0..40).map(|i| [3, 2, 3, 1, 2, 3, 0, 2][i % 8]).collect();
        let mut v: Vec<u32> = (0..40).collect();
        gcc_sort(&mut v, |&a, &b| counts[a as usize] > counts[b as usize]);
        assert_eq!(
            v,
            [
                8, 16, 26, 18, 13, 29, 24, 10, 32, 0, 34, 5, 21, 37, 2, 31, 23, 25, 28, 20, 33, 36, 39, 1, 17, 15, 4,
                12, 7, 9, 11, 3, 35, 27, 19, 22, 6, 30, 14, 38
            ]
        );
        // A longer list, many ties.
        let mut state = 7u64;
        let counts: Vec<u32> = (0..300)
            .map(|_| {
                state = crate::kmer::mix64(state + 1);
                (state % 4) as u32
            })
            .collect();
        let mut v: Vec<u32> = (0..300).collect();
        gcc_sort(&mut v, |&a, &b| counts[a as usize] > counts[b as usize]);
        assert_eq!(
            v[..24],
            [
                93, 154, 153, 151, 146, 260, 142, 140, 266, 129, 121, 119, 110, 157, 92, 86, 85, 274, 80, 79, 74, 73,
                71, 67
            ]
        );
        assert_eq!(v[288..], [148, 147, 144, 141, 138, 137, 135, 132, 130, 122, 120, 113]);
        // With 16 children or fewer, insertion sort keeps ties in id order.
        let mut small: Vec<u32> = (0..16).collect();
        gcc_sort(&mut small, |&a, &b| counts[a as usize] > counts[b as usize]);
        let mut stable: Vec<u32> = (0..16).collect();
        stable.sort_by_key(|&i| std::cmp::Reverse(counts[i as usize]));
        assert_eq!(small, stable);
    }

    #[test]
    fn report_lines() {
        let t = crate::taxonomy::tests::small();
        let mut r = KrakenReport::new(t.len());
        for _ in 0..3 {
            r.add(t.index_of(562));
        }
        r.add(t.index_of(561));
        r.add(t.index_of(623));
        r.add(None);
        let text = r.render_with(&t, false);
        let expected = [
            " 16.67\t1\t1\tU\t0\tunclassified",
            " 83.33\t5\t0\tR\t1\troot",
            " 83.33\t5\t0\tD\t2\t  Bacteria",
            " 83.33\t5\t0\tF\t543\t    Enterobacteriaceae",
            " 66.67\t4\t1\tG\t561\t      Escherichia",
            " 50.00\t3\t3\tS\t562\t        Escherichia coli",
            " 16.67\t1\t0\tG\t620\t      Shigella",
            " 16.67\t1\t1\tS\t623\t        Shigella flexneri",
        ]
        .map(|l| format!("{l}\n"))
        .concat();
        assert_eq!(text, expected);
        let all = r.render_with(&t, true);
        assert!(all.contains("\t0\t0\tS\t564\t        Escherichia fergusonii\n"), "{all}");
    }
}
