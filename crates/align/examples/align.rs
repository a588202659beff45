//! Aligns a reads file to a reference: SAM on stdout, the results JSON on stderr.
//!
//! `cargo run --release -p mgds-align --example align -- REFERENCE READS [THREADS] > out.sam`

use std::io::Write;
use std::path::PathBuf;

use mgds_align::{AlignOptions, Preset, align};

fn main() {
    let mut args = std::env::args_os().skip(1);
    let (Some(reference), Some(reads)) = (args.next(), args.next()) else {
        eprintln!("usage: align REFERENCE READS [THREADS] > out.sam");
        std::process::exit(2);
    };
    let threads = args.next().and_then(|t| t.to_str()?.parse().ok()).unwrap_or(2);
    let opts = AlignOptions { threads, preset: Preset::ShortReads, ..Default::default() };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match align(&PathBuf::from(reference), &PathBuf::from(reads), &opts, &mut out) {
        Ok(results) => {
            out.flush().ok();
            eprintln!("{}", serde_json::to_string_pretty(&results).unwrap());
        }
        Err(err) => {
            eprintln!("error: {err}");
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            std::process::exit(1);
        }
    }
}
