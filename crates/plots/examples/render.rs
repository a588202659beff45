//! Renders the abundance chart of a results JSON file to `OUT.svg` and `OUT.png`, and prints its
//! bars, for looking at the output by eye.
//!
//! `cargo run -p mgds-plots --example render -- RESULTS.json OUT [RANK] [TOP_N] [abundance|readcount]`

use std::process::ExitCode;

use mgds_plots::{AbundanceChartOptions, Metric};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, out, rest @ ..] = args.as_slice() else {
        eprintln!("usage: render RESULTS.json OUT [RANK] [TOP_N] [abundance|readcount]");
        return ExitCode::from(2);
    };
    let mut opts = AbundanceChartOptions::default();
    if let Some(rank) = rest.first() {
        opts.rank.clone_from(rank);
    }
    if let Some(n) = rest.get(1).and_then(|n| n.parse().ok()) {
        opts.top_n = n;
    }
    if let Some(m) = rest.get(2).and_then(|m| Metric::from_key(m)) {
        opts.metric = m;
    }
    let run = || -> Result<(), Box<dyn std::error::Error>> {
        let results = serde_json::from_slice(&std::fs::read(input)?)?;
        let chart = mgds_plots::abundance_bars(&results, &opts)?;
        std::fs::write(format!("{out}.svg"), &chart.svg)?;
        std::fs::write(format!("{out}.png"), mgds_plots::svg_to_png(&chart.svg, 1.0)?)?;
        for bar in &chart.bars {
            println!("{:>14.4}  {:<10}  {}", bar.value, bar.tax_id.as_deref().unwrap_or("-"), bar.label);
        }
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
