//! `mgds subset-reads`: the reads of chosen taxa, from read-level results and the FASTQ, like
//! `onecodex scripts subset_reads` (same options, same semantics, same output names).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use mgds_formats::{OutputCompression, PairMode, SubsetInput, SubsetOptions, TaxTree, parse_tax_id};

/// Options of `mgds subset-reads`.
#[derive(clap::Args)]
pub struct SubsetArgs {
    /// The reads: a FASTQ/FASTA file (gzipped or not), single-end or interleaved.
    pub reads: PathBuf,
    /// The read-2 file of an R1/R2 pair.
    pub reads_r2: Option<PathBuf>,
    /// The read-level results (gzipped TSV) of the classification of these reads.
    #[arg(long, required_unless_present = "classification")]
    pub readlevel: Option<PathBuf>,
    /// The classification results JSON, whose tree gives the descendants for --with-children.
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Fetch the read-level results and the results tree of this classification from the
    /// service instead of --readlevel and --results.
    #[arg(long, conflicts_with_all = ["readlevel", "results"])]
    pub classification: Option<String>,
    /// A taxonomy id whose reads to keep (or exclude); repeat for several.
    #[arg(short = 't', long = "tax-id", required = true)]
    pub tax_ids: Vec<String>,
    /// Also the reads of every descendant of the given taxa (needs --results or --classification).
    #[arg(long)]
    pub with_children: bool,
    /// Write the reads NOT assigned to the given taxa.
    #[arg(long)]
    pub exclude_reads: bool,
    /// Also consider reads that did not pass the sample-wide filter.
    #[arg(long)]
    pub include_lowconf: bool,
    /// Judge each mate of a pair on its own (by default a pair is kept when either mate is).
    #[arg(long, conflicts_with = "both_mates")]
    pub subset_pairs_independently: bool,
    /// Keep a pair only when both mates are selected (not in onecodex).
    #[arg(long)]
    pub both_mates: bool,
    /// Treat READS as interleaved pairs (read 1, read 2, ...): pairs are judged together.
    #[arg(long, conflicts_with = "reads_r2")]
    pub interleaved: bool,
    /// Compress the outputs with gzip.
    #[arg(long)]
    pub gzip_output: bool,
    /// The folder to write `<name>.filtered.fastq` files into.
    #[arg(short = 'o', long = "out", default_value = ".")]
    pub out: PathBuf,
}

/// `mgds subset-reads`: with `--classification`, first downloads the read-level results and the
/// results table into a temporary folder; then subsets the local files.
pub async fn run(g: &crate::connect::Global, mut args: SubsetArgs) -> Result<()> {
    let _downloads = match args.classification.clone() {
        Some(id) => {
            let ctx = crate::connect::connect(g).await?;
            let dir = tempfile::tempdir()?;
            let classifications = ctx.client.classifications();
            let readlevel = dir.path().join("readlevel.tsv.gz");
            classifications.download_readlevel(id.as_str(), &readlevel).await?;
            let results = dir.path().join("results.json");
            std::fs::write(&results, serde_json::to_vec(&classifications.results(id.as_str()).await?)?)?;
            args.readlevel = Some(readlevel);
            args.results = Some(results);
            Some(dir)
        }
        None => None,
    };
    let report = tokio::task::spawn_blocking(move || run_local(&args)).await??;
    print_report(&report);
    Ok(())
}

/// Runs the subset on local files. Returns the report for printing.
pub fn run_local(args: &SubsetArgs) -> Result<mgds_formats::SubsetReport> {
    let readlevel = args.readlevel.as_deref().context("--readlevel is required")?;
    let results = args.results.as_deref();
    let mut ids = Vec::new();
    for t in &args.tax_ids {
        ids.push(parse_tax_id(t).with_context(|| format!("{t:?} is not a taxonomy id (a whole number such as 562)"))?);
    }
    let mut options = SubsetOptions::new(ids);
    if args.with_children {
        let Some(results) = results else {
            bail!("--with-children needs the classification tree: pass --results RESULTS_JSON or --classification ID");
        };
        let file = std::fs::File::open(results).with_context(|| format!("cannot open {}", results.display()))?;
        let parsed: mgds_api::ClassificationResults = serde_json::from_reader(std::io::BufReader::new(file))
            .with_context(|| format!("{} is not a classification results JSON", results.display()))?;
        let tree = TaxTree::from_results(&parsed)?;
        options = options.with_children(&tree);
    }
    options.exclude = args.exclude_reads;
    options.include_lowconf = args.include_lowconf;
    options.pair_mode = if args.subset_pairs_independently {
        PairMode::Independent
    } else if args.both_mates {
        PairMode::Both
    } else {
        PairMode::Either
    };
    options.output = if args.gzip_output { OutputCompression::GZIP } else { OutputCompression::Plain };
    let input = match (&args.reads_r2, args.interleaved) {
        (Some(r2), _) => SubsetInput::Paired { r1: args.reads.clone(), r2: r2.clone() },
        (None, true) => SubsetInput::Interleaved(args.reads.clone()),
        (None, false) => SubsetInput::Single(args.reads.clone()),
    };
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    Ok(mgds_formats::subset_reads(readlevel, &input, &args.out, &options)?)
}

/// Prints what was written: one line per output file on stdout, a summary on stderr.
pub fn print_report(report: &mgds_formats::SubsetReport) {
    for o in &report.outputs {
        println!("{}", o.path.display());
        eprintln!("{}: {} reads", o.path.display(), o.records);
    }
    eprintln!("read {} records against {} read-level rows", report.records, report.rows);
}
