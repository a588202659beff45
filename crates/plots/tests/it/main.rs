//! Charts of the reference result tables.

use mgds_api::{ClassificationResults, Measure};
use mgds_plots::{AbundanceChartOptions, Error, Metric, abundance_bars, abundance_png, svg_to_png, top_taxa};

const FIXTURES: &str = "/work/shared/reference/fixtures/api/v1/classifications_results";

fn fixture(name: &str) -> ClassificationResults {
    let path = format!("{FIXTURES}/{name}.json");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_slice(&bytes).unwrap()
}

/// 2,284 taxa, 717 species.
fn large() -> ClassificationResults {
    fixture("b50c176668234fe7")
}

/// 42 taxa, 3 species.
fn small() -> ClassificationResults {
    fixture("0f4ee4ecb3a3412f")
}

fn opts() -> AbundanceChartOptions {
    AbundanceChartOptions::default()
}

/// The bar elements of an SVG: `(class, data-tax-id, title)`.
fn bar_elements(svg: &str) -> Vec<(String, Option<String>, String)> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("class").is_some_and(|c| c.starts_with("bar")))
        .map(|n| {
            let title = n
                .children()
                .find(|c| c.has_tag_name("title"))
                .and_then(|t| t.text())
                .expect("every bar has a <title>")
                .to_owned();
            (n.attribute("class").unwrap().to_owned(), n.attribute("data-tax-id").map(str::to_owned), title)
        })
        .collect()
}

/// All text drawn in the SVG, one string per `<text>` element.
fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants().filter(|n| n.has_tag_name("text")).map(|n| n.text().unwrap_or("").trim().to_owned()).collect()
}

#[test]
fn svg_has_one_titled_rect_per_bar() {
    let chart = abundance_bars(&large(), &opts()).unwrap();
    assert_eq!(chart.bars.len(), 11);
    let elements = bar_elements(&chart.svg);
    assert_eq!(elements.len(), chart.bars.len());
    for (bar, (class, tax_id, title)) in chart.bars.iter().zip(&elements) {
        assert_eq!(tax_id, &bar.tax_id);
        assert!(title.starts_with(&bar.label), "{title}");
        assert!(title.contains('%'), "{title}");
        if let Some(id) = &bar.tax_id {
            assert_eq!(class, "bar");
            assert!(title.contains(&format!("tax id {id}")), "{title}");
        } else {
            assert_eq!(class, "bar other");
        }
    }
    assert_eq!(elements[0].2, "Escherichia coli\ntax id 562\n19.313% (share of genome copies)");
    assert!(chart.svg.contains(r#"font-family="DejaVu Sans, sans-serif""#));
}

#[test]
fn species_bars_sorted_with_other_last_summing_to_100() {
    let bars = top_taxa(&large(), &opts());
    assert_eq!(bars.len(), 11);
    assert_eq!(bars[0].label, "Escherichia coli");
    assert_eq!(bars[0].tax_id.as_deref(), Some("562"));
    assert!(bars[..10].windows(2).all(|w| w[0].value >= w[1].value));
    assert!(bars[..10].iter().all(|b| b.tax_id.is_some()));
    let other = &bars[10];
    assert!(other.is_other() && other.label.starts_with("Other ("));
    let total: f64 = bars.iter().map(|b| b.value).sum();
    assert!((total - 100.0).abs() < 1e-6, "total {total}");
}

#[test]
fn other_is_absent_with_at_most_top_n_taxa() {
    let bars = top_taxa(&small(), &opts());
    let labels: Vec<_> = bars.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(labels, ["Bacteroides uniformis", "Roseburia faecis", "Clostridium sp. AT4"]);
    let total: f64 = bars.iter().map(|b| b.value).sum();
    assert!((total - 100.0).abs() < 1e-6);
    let three = AbundanceChartOptions { top_n: 3, ..opts() };
    assert!(top_taxa(&small(), &three).iter().all(|b| !b.is_other()));
    let two = AbundanceChartOptions { top_n: 2, ..opts() };
    let bars = top_taxa(&small(), &two);
    assert_eq!(bars.len(), 3);
    assert_eq!(bars[2].label, "Other (1 taxa)");
}

#[test]
fn genus_abundance_is_the_sum_of_its_species() {
    let results = large();
    let genus = AbundanceChartOptions { rank: "genus".into(), top_n: 1000, ..opts() };
    let bars = top_taxa(&results, &genus);
    assert!(bars.iter().all(|b| !b.is_other()));
    let species = top_taxa(&results, &AbundanceChartOptions { top_n: 1000, ..opts() });
    // Dialister (39948): D. invisus sits right under it, D. invisus CAG:218 under its
    // "environmental samples" node.
    let dialister = bars.iter().find(|b| b.tax_id.as_deref() == Some("39948")).expect("a Dialister bar").value;
    let expected: f64 = species
        .iter()
        .filter(|b| descends_from(&results, b.tax_id.as_deref().unwrap(), "39948"))
        .map(|b| b.value)
        .sum();
    assert!(expected > 27.0, "{expected}");
    assert!((dialister - expected).abs() < 1e-9, "{dialister} vs {expected}");
    // Above species the bars cannot add up to more than the whole.
    assert!(bars.iter().map(|b| b.value).sum::<f64>() <= 100.0 + 1e-6);
    assert!(bars.windows(2).all(|w| w[0].value >= w[1].value));
}

/// Whether taxon `id` is `ancestor` or below it, walking the table's parent links.
fn descends_from<'a>(results: &'a ClassificationResults, mut id: &'a str, ancestor: &str) -> bool {
    while let Some(row) = results.table.iter().find(|r| r.tax_id == id) {
        if row.tax_id == ancestor {
            return true;
        }
        let Some(parent) = row.parent_tax_id.as_deref() else {
            return false;
        };
        id = parent;
    }
    false
}

#[test]
fn readcount_bars_use_counts_with_children() {
    let results = large();
    let o = AbundanceChartOptions { metric: Metric::Readcount, rank: "genus".into(), ..opts() };
    let bars = top_taxa(&results, &o);
    let first = &bars[0];
    let row = results.table.iter().find(|r| Some(&r.tax_id) == first.tax_id.as_ref()).unwrap();
    assert_eq!(row.rank, "genus");
    assert_eq!(first.value, row.readcount_w_children as f64);
    let chart = abundance_bars(&results, &o).unwrap();
    assert!(bar_elements(&chart.svg)[0].2.ends_with(" reads"));
    assert!(texts(&chart.svg).iter().any(|t| t == "Reads (taxon and descendants)"));
}

#[test]
fn no_data_for_a_rank_without_taxa() {
    let o = AbundanceChartOptions { rank: "strain".into(), ..opts() };
    let err = abundance_bars(&large(), &o).unwrap_err();
    assert!(matches!(&err, Error::NoData { rank } if rank == "strain"));
    assert_eq!(err.to_string(), "no taxa at rank strain in these results");
    assert!(matches!(abundance_png(&small(), &o), Err(Error::NoData { .. })));
}

#[test]
fn names_appear_long_ones_truncated_and_markup_escaped() {
    let mut results = small();
    let long = "Bifidobacterium bifidum ATCC 29521 = JCM 1255 = DSM 20456 with an even longer strain designation";
    results.table.iter_mut().find(|r| r.name == "Roseburia faecis").unwrap().name = long.into();
    let tricky = r#"Candidatus "A&B" <strain> 'x'"#;
    results.table.iter_mut().find(|r| r.name == "Clostridium sp. AT4").unwrap().name = tricky.into();
    let o = AbundanceChartOptions { width: 600, ..opts() };
    let chart = abundance_bars(&results, &o).unwrap();
    let drawn = texts(&chart.svg);
    assert!(drawn.iter().any(|t| t == "Bacteroides uniformis"));
    assert!(drawn.iter().any(|t| t == tricky), "escaped text round-trips: {drawn:?}");
    let cut = drawn.iter().find(|t| t.starts_with("Bifidobacterium")).unwrap();
    assert!(cut.ends_with('…') && cut.len() < long.len(), "{cut}");
    // The hover titles keep the full names.
    let titles: Vec<_> = bar_elements(&chart.svg).into_iter().map(|e| e.2).collect();
    assert!(titles.iter().any(|t| t.starts_with(long)));
    assert!(titles.iter().any(|t| t.starts_with(tricky)));
    assert!(chart.svg.contains("&lt;strain&gt;") && !chart.svg.contains("<strain>"));
}

#[test]
fn png_has_magic_and_requested_size() {
    let o = AbundanceChartOptions { width: 640, height: 360, ..opts() };
    let png = abundance_png(&large(), &o).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(png_size(&png), (640, 360));
    let svg = abundance_bars(&large(), &o).unwrap().svg;
    assert_eq!(png_size(&svg_to_png(&svg, 2.0).unwrap()), (1280, 720));
}

/// Width and height from the IHDR chunk, which always comes first.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap());
    (be(&png[16..20]), be(&png[20..24]))
}

#[test]
fn output_is_deterministic() {
    let results = large();
    for o in [opts(), AbundanceChartOptions { metric: Metric::Readcount, rank: "family".into(), ..opts() }] {
        let a = abundance_bars(&results, &o).unwrap();
        let b = abundance_bars(&results.clone(), &o).unwrap();
        assert_eq!(a, b);
    }
    let o = AbundanceChartOptions { width: 400, height: 240, ..opts() };
    assert_eq!(abundance_png(&results, &o).unwrap(), abundance_png(&results, &o).unwrap());
}

#[test]
fn many_bars_and_sizes_still_draw() {
    let results = large();
    let o = AbundanceChartOptions { top_n: 40, title: Some("A custom title".into()), ..opts() };
    let chart = abundance_bars(&results, &o).unwrap();
    assert_eq!(bar_elements(&chart.svg).len(), 41);
    assert!(texts(&chart.svg).iter().any(|t| t == "A custom title"));
    let tiny = AbundanceChartOptions { width: 10, ..opts() };
    assert!(matches!(abundance_bars(&results, &tiny), Err(Error::InvalidSize { .. })));
}

#[test]
fn each_measure_is_named_in_the_title_and_axis() {
    let mut results = large();
    // Re-estimated abundance on the species rows: the genome-copy shares, renormalised.
    let total: f64 = results.table.iter().filter(|r| r.rank == "species").filter_map(|r| r.abundance).sum();
    for r in results.table.iter_mut().filter(|r| r.rank == "species") {
        r.reestimated_abundance = r.abundance.map(|a| a / total);
    }
    for (metric, title, axis) in [
        (Metric::Share(Measure::Reestimated), "Re-estimated abundance by species", "Re-estimated abundance (%"),
        (Metric::Share(Measure::GenomeCopies), "Share of genome copies by species", "Share of genome copies (%"),
        (Metric::Share(Measure::ReadShare), "Share of reads by species", "Share of all reads in the sample (%)"),
        (Metric::Readcount, "Reads by species", "Reads (taxon and descendants)"),
    ] {
        let chart = abundance_bars(&results, &AbundanceChartOptions { metric, ..opts() }).unwrap();
        let t = texts(&chart.svg);
        assert!(t.iter().any(|s| s.starts_with(title)), "{metric:?}: {t:?}");
        assert!(t.iter().any(|s| s.starts_with(axis)), "{metric:?}: {t:?}");
    }
}

#[test]
fn read_share_is_reads_below_the_taxon_over_all_reads() {
    let results = large();
    let bars = top_taxa(
        &results,
        &AbundanceChartOptions { metric: Metric::Share(Measure::ReadShare), rank: "genus".into(), ..opts() },
    );
    let first = &bars[0];
    let row = results.table.iter().find(|r| Some(&r.tax_id) == first.tax_id.as_ref()).unwrap();
    let expected = 100.0 * row.readcount_w_children as f64 / results.n_reads as f64;
    assert!((first.value - expected).abs() < 1e-9, "{} vs {expected}", first.value);
    // Unclassified reads count in the whole, so genera add up to less than 100%.
    assert!(bars.iter().map(|b| b.value).sum::<f64>() < 100.0);
    // Without re-estimated abundance in the results, that measure draws nothing.
    assert!(
        top_taxa(&results, &AbundanceChartOptions { metric: Metric::Share(Measure::Reestimated), ..opts() }).is_empty()
    );
}
