//! How lists and records are printed: a table for people, `--json` or `--csv` for scripts.
//! Data goes to stdout; everything else to stderr.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;

/// Output format options.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Print JSON (an array for lists).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV with a header row.
    #[arg(long)]
    pub csv: bool,
}

/// A column: its heading and where its value is in the record (`a.b` for nested fields; a
/// reference prints as its id).
pub type Column = (&'static str, &'static str);

fn cell(v: &Value, path: &str) -> String {
    let mut cur = v;
    for part in path.split('.') {
        match cur.get(part) {
            Some(next) => cur = next,
            None => return String::new(),
        }
    }
    match cur {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Object(m) if m.contains_key("$ref") => {
            m["$ref"].as_str().unwrap_or_default().rsplit('/').next().unwrap_or_default().to_string()
        }
        Value::Array(items) => items.iter().map(|i| cell(i, "")).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

fn id_of(v: &Value) -> String {
    v.get("$uri")
        .and_then(Value::as_str)
        .map(|u| u.rsplit('/').next().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// Prints records as the options say.
pub fn print_list<T: Serialize>(out: &OutputArgs, items: &[T], columns: &[Column]) -> Result<()> {
    let values: Vec<Value> = items.iter().map(serde_json::to_value).collect::<Result<_, _>>()?;
    let stdout = std::io::stdout();
    let mut w = stdout.lock();
    if out.json {
        serde_json::to_writer_pretty(&mut w, &values)?;
        writeln!(w)?;
        return Ok(());
    }
    let row = |v: &Value| -> Vec<String> {
        columns
            .iter()
            .map(|(_, path)| {
                if *path == "id" {
                    id_of(v)
                } else if path.is_empty() {
                    String::new()
                } else {
                    cell(v, path)
                }
            })
            .collect()
    };
    if out.csv {
        let mut c = csv::Writer::from_writer(w);
        c.write_record(columns.iter().map(|(h, _)| *h))?;
        for v in &values {
            c.write_record(row(v))?;
        }
        c.flush()?;
        return Ok(());
    }
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING).set_header(columns.iter().map(|(h, _)| *h));
    for v in &values {
        table.add_row(row(v));
    }
    writeln!(w, "{table}")?;
    Ok(())
}

/// Prints one record: pretty JSON (also what `--json` gives).
pub fn print_one<T: Serialize>(item: &T) -> Result<()> {
    let stdout = std::io::stdout();
    let mut w = stdout.lock();
    serde_json::to_writer_pretty(&mut w, item)?;
    writeln!(w)?;
    Ok(())
}
