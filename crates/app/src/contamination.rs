//! Contaminants of compared samples, told apart by the negative controls among them: each taxon
//! at the rank scored as decontam scores it (`mgds_diversity::decontam`: prevalence in the
//! controls against the true samples, share against DNA concentration, or both), the method and
//! its threshold named. The view, its CSV and `mgds compare --contaminants` all come from
//! [`prepare`]. Nothing is subtracted: taxa are marked, and the comparison can leave marked ones
//! out when asked.
//!
//! Which samples are controls, and their concentrations, come from their metadata:
//! - a negative control has a custom field `control` (or `negative_control`) whose value is
//!   one of [`CONTROL_VALUES`] (case and spaces aside);
//! - the DNA concentration (for the frequency method) is a custom field, `dna_concentration`
//!   unless asked otherwise, a number above 0 (a true sample without one leaves the frequency
//!   method out, and the view says which);
//! - batches (scored apart, the lowest score kept) are the values of a field when asked
//!   (`batch_by`), else all the samples are one batch.

use std::collections::HashMap;

use mgds_api::ClassificationResults;
use mgds_api::controls::{ControlsInput, ControlsOutput};
use mgds_diversity::{ContaminantScore, DecontamMethod};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::compare::{CompareProgress, Gathered, SkippedSample, Source, gather};
use crate::error::{CmdError, CmdResult, sentence};
use crate::text::shown_text;

pub use mgds_api::controls::{CONTROL_VALUES, control_kind};

/// Scorings running at once in this process.
static SCORING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// The field read for DNA concentration unless another is named.
pub const CONCENTRATION_FIELD: &str = "dna_concentration";
/// Taxa listed at most (the lowest scores first), in the view and the CSV; the view says when
/// more were scored.
pub const MAX_ROWS: usize = crate::compare::MAX_FLAGGED;

/// What the contaminants view asks for.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct ContaminationRequest {
    /// The samples, controls among them.
    pub samples: Vec<String>,
    /// The rank to score taxa at.
    pub rank: String,
    /// `prevalence`, `frequency` or `combined`; `None`: combined where every true sample has a
    /// concentration, else prevalence.
    #[serde(default)]
    pub method: Option<String>,
    /// The threshold (default decontam's 0.1).
    #[serde(default)]
    pub threshold: Option<f64>,
    /// The field holding DNA concentration (default [`CONCENTRATION_FIELD`]).
    #[serde(default)]
    pub concentration_field: Option<String>,
    /// A field whose values are batches.
    #[serde(default)]
    pub batch_by: Option<String>,
    /// Count the host's taxa too.
    #[serde(default)]
    pub show_host: bool,
}

/// One taxon's scores.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ContaminantRow {
    /// Its tax id.
    pub tax_id: String,
    /// Its name.
    pub name: String,
    /// The score the call is made on (absent where it could not be made).
    pub score: Option<f64>,
    /// The prevalence score.
    pub prevalence: Option<f64>,
    /// The frequency score.
    pub frequency: Option<f64>,
    /// Called a contaminant (score below the threshold).
    pub contaminant: bool,
    /// Controls it is present in.
    pub in_controls: usize,
    /// True samples it is present in.
    pub in_samples: usize,
    /// Its mean share of the reads of the controls.
    pub mean_share_controls: f64,
    /// Its mean share of the reads of the true samples.
    pub mean_share_samples: f64,
}

/// A sample as the view names it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ContaminationSample {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its batch, when batches were asked for.
    pub batch: Option<String>,
}

/// The contaminants view.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ContaminationView {
    /// The method's key (`prevalence`, `frequency`, `combined`).
    pub method: String,
    /// The method in words.
    pub method_label: String,
    /// The threshold.
    pub threshold: f64,
    /// The rank.
    pub rank: String,
    /// The negative controls.
    pub controls: Vec<ContaminationSample>,
    /// The true samples.
    pub samples: Vec<ContaminationSample>,
    /// Taxa by score, lowest first (those without a score last), at most [`MAX_ROWS`].
    pub rows: Vec<ContaminantRow>,
    /// Taxa scored in all.
    pub taxa: usize,
    /// Taxa called contaminants.
    pub flagged: usize,
    /// Samples left out, with why.
    pub skipped: Vec<SkippedSample>,
    /// How the numbers were made, for the screen and the files.
    pub notes: Vec<String>,
    /// For a controls analysis of the service: the control it ran on, and the field and value
    /// that made its batch.
    #[serde(default)]
    pub batch_of: Option<ControlBatch>,
}

/// The batch a controls analysis scored.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ControlBatch {
    /// The control the analysis ran on.
    pub control: String,
    /// The custom field that names the batch.
    pub field: String,
    /// Its value.
    pub value: String,
}

fn invalid(message: String) -> CmdError {
    CmdError::new("invalid", message)
}

/// A request's checked parameters.
struct Checked {
    rank: String,
    threshold: f64,
    asked: Option<DecontamMethod>,
    conc_field: String,
    batch_by: Option<String>,
    show_host: bool,
}

/// Checks a request's parameters, each refusal naming the parameter and what it may be.
fn check(req: &ContaminationRequest) -> CmdResult<Checked> {
    let rank = req.rank.trim().to_lowercase();
    if rank.is_empty() || rank.len() > 32 || !rank.bytes().all(|b| b.is_ascii_alphabetic() || b == b' ') {
        return Err(invalid("Choose a rank: species, genus, family, order, class or phylum.".into()));
    }
    let threshold = req.threshold.unwrap_or(mgds_diversity::DECONTAM_THRESHOLD);
    if !(0.0..=1.0).contains(&threshold) {
        return Err(invalid(format!("The threshold is a probability from 0 to 1, not {threshold}.")));
    }
    let asked = match req.method.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
        None => None,
        Some("prevalence") => Some(DecontamMethod::Prevalence),
        Some("frequency") => Some(DecontamMethod::Frequency),
        Some("combined") => Some(DecontamMethod::Combined),
        Some(other) => {
            let shown: String = other.chars().take(20).collect();
            return Err(invalid(format!("There is no method {shown:?}: prevalence, frequency or combined.")));
        }
    };
    let conc_field =
        req.concentration_field.as_deref().map(str::trim).filter(|f| !f.is_empty()).unwrap_or(CONCENTRATION_FIELD);
    let batch_by = req.batch_by.as_deref().map(str::trim).filter(|b| !b.is_empty());
    for (what, f) in [("concentration", Some(conc_field)), ("batch", batch_by)] {
        let Some(f) = f else { continue };
        if f.chars().count() > mgds_api::MAX_CUSTOM_METADATA_KEY_CHARS || f.chars().any(char::is_control) {
            return Err(invalid(format!(
                "The {what} field's name is not one a sample can have: names are at most {} characters, on one line.",
                mgds_api::MAX_CUSTOM_METADATA_KEY_CHARS
            )));
        }
    }
    Ok(Checked {
        rank,
        threshold,
        asked,
        conc_field: conc_field.to_string(),
        batch_by: batch_by.map(String::from),
        show_host: req.show_host,
    })
}

/// A sample with its classification, as the scoring takes it.
#[derive(Debug, Clone)]
pub struct Scored {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its metadata (which says whether it is a control, and its concentration and batch).
    pub metadata: Option<mgds_api::Metadata>,
    /// Its classification's results.
    pub results: std::sync::Arc<ClassificationResults>,
}

/// Fetches the samples `req` names and scores their taxa (see the module's notes).
pub async fn prepare(
    src: Source<'_>,
    req: &ContaminationRequest,
    progress: &(dyn Fn(CompareProgress) + Sync),
) -> CmdResult<ContaminationView> {
    let checked = check(req)?;
    let Gathered { fetched, skipped, .. } =
        gather(src, &req.samples, progress, "to be scored against controls").await?;
    let samples: Vec<Scored> = fetched
        .into_iter()
        .filter_map(|f| {
            let results = f.results?;
            Some(Scored { id: f.id, name: f.info.name, metadata: f.info.metadata, results })
        })
        .collect();
    let _turn = SCORING.acquire().await.map_err(|_| CmdError::new("busy", "Stopping; try again in a moment."))?;
    tokio::task::spawn_blocking(move || score(&checked, samples, skipped))
        .await
        .map_err(|e| CmdError::new("failed", format!("The contaminants could not be scored ({e}).")))?
}

/// Scores the taxa of `all` (see the module's notes): the work of [`prepare`] once the samples
/// are fetched, and of the service's controls analyses. Runs on the caller's thread.
fn score(checked: &Checked, all: Vec<Scored>, skipped: Vec<SkippedSample>) -> CmdResult<ContaminationView> {
    let Checked { rank, threshold, asked, conc_field, batch_by, show_host } = checked;
    let (rank, threshold, asked, show_host) = (rank.clone(), *threshold, *asked, *show_host);
    let conc_field = conc_field.as_str();
    let batch_by = batch_by.as_deref();
    // decontam leaves out samples without reads: a blank with nothing at the rank would count
    // as a control in which every taxon is absent.
    let (taxa, counts) = {
        let results: Vec<&ClassificationResults> = all.iter().map(|r| r.results.as_ref()).collect();
        crate::diversity::table(&results, &rank, show_host, &|t, _| Some(t.readcount_w_children as f64))
    };
    let empty: Vec<String> = all
        .iter()
        .zip(&counts)
        .filter(|(_, row)| row.iter().sum::<f64>() <= 0.0)
        .map(|(f, _)| shown_text(&f.name))
        .collect();
    let (ready, counts): (Vec<&Scored>, Vec<Vec<f64>>) =
        all.iter().zip(counts).filter(|(_, row)| row.iter().sum::<f64>() > 0.0).unzip();
    let control: Vec<bool> = ready.iter().map(|f| f.metadata.as_ref().and_then(control_kind).is_some()).collect();
    let n_controls = control.iter().filter(|&&c| c).count();
    let marking = format!(
        "Mark a negative control with a custom metadata field \"control\" set to one of: {}.",
        CONTROL_VALUES.join(", ")
    );
    let raw_conc: Vec<Option<String>> =
        ready.iter().map(|f| f.metadata.as_ref().and_then(|m| m.field_text(conc_field))).collect();
    let concentration: Vec<Option<f64>> = raw_conc
        .iter()
        .map(|v| v.as_deref().and_then(|v| v.trim().parse::<f64>().ok()).filter(|c| c.is_finite() && *c > 0.0))
        .collect();
    let missing_conc: Vec<String> = (0..ready.len())
        .filter(|&i| !control[i] && concentration[i].is_none())
        .map(|i| match &raw_conc[i] {
            Some(v) => format!("{} (\"{}\" is not a number above 0)", shown_text(&ready[i].name), shown_text(v)),
            None => shown_text(&ready[i].name),
        })
        .collect();
    let method = match asked {
        Some(m) => m,
        None if missing_conc.is_empty() && n_controls == 0 => DecontamMethod::Frequency,
        None if missing_conc.is_empty() => DecontamMethod::Combined,
        None => DecontamMethod::Prevalence,
    };
    let empty_note = (!empty.is_empty()).then(|| {
        let some: Vec<&str> = empty.iter().take(5).map(String::as_str).collect();
        format!(
            "{} sample{} with no reads at rank {rank} left out, as decontam leaves them out: {}{}.",
            empty.len(),
            if empty.len() == 1 { "" } else { "s" },
            some.join(", "),
            if empty.len() > 5 { ", …" } else { "" }
        )
    });
    if method != DecontamMethod::Frequency && n_controls == 0 {
        let why = match &empty_note {
            Some(n) if !empty.is_empty() => format!(" ({n})"),
            _ => String::new(),
        };
        return Err(CmdError::new(
            "not_ready",
            format!("None of these samples is a negative control with reads at rank {rank}{why}. {marking}"),
        ));
    }
    if n_controls == ready.len() {
        return Err(CmdError::new(
            "not_ready",
            "Every sample here is a negative control: compare the controls with the samples they came with.",
        ));
    }
    let some_missing = || {
        let some: Vec<&str> = missing_conc.iter().take(5).map(String::as_str).collect();
        format!("{}{}", some.join(", "), if missing_conc.len() > 5 { ", …" } else { "" })
    };
    if method != DecontamMethod::Prevalence && !missing_conc.is_empty() {
        return Err(invalid(format!(
            "The frequency method needs each true sample's DNA concentration in the field \"{conc_field}\" (a number above 0); {} of them have none: {}. Add it, or choose the prevalence method.",
            missing_conc.len(),
            some_missing()
        )));
    }
    let batches: Vec<Option<String>> =
        ready.iter().map(|f| batch_by.and_then(|b| f.metadata.as_ref().and_then(|m| m.field_text(b)))).collect();
    let named = |i: usize| ContaminationSample {
        id: ready[i].id.clone(),
        name: shown_text(&ready[i].name),
        batch: batches[i].as_deref().map(shown_text),
    };
    let controls: Vec<ContaminationSample> = (0..ready.len()).filter(|&i| control[i]).map(named).collect();
    let samples: Vec<ContaminationSample> = (0..ready.len()).filter(|&i| !control[i]).map(named).collect();
    let names: HashMap<String, String> =
        ready.iter().flat_map(|f| f.results.table.iter()).map(|t| (t.tax_id.clone(), t.name.clone())).collect();
    let without_batch = batches.iter().filter(|b| b.is_none()).count();
    let computed = {
        let shares: Vec<Vec<f64>> = counts
            .iter()
            .map(|row| {
                let total: f64 = row.iter().sum();
                row.iter().map(|v| v / total).collect()
            })
            .collect();
        let mut batch_index: HashMap<Option<String>, usize> = HashMap::new();
        let batch_ids: Vec<usize> = batches
            .iter()
            .map(|b| {
                let next = batch_index.len();
                *batch_index.entry(b.clone()).or_insert(next)
            })
            .collect();
        let conc: Vec<f64> = concentration.iter().map(|c| c.unwrap_or(f64::NAN)).collect();
        let scores = mgds_diversity::decontam(&shares, &control, &batch_ids, Some(&conc), method, threshold);
        let mut rows: Vec<ContaminantRow> = taxa
            .iter()
            .zip(&scores)
            .enumerate()
            .map(|(j, (tax_id, s))| {
                let name = names.get(tax_id).map_or(tax_id.as_str(), String::as_str);
                row(j, tax_id, name, s, &shares, &control)
            })
            .collect();
        rows.sort_by(|a, b| match (a.score, b.score) {
            (Some(x), Some(y)) => x.total_cmp(&y).then_with(|| a.name.cmp(&b.name)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.name.cmp(&b.name),
        });
        rows
    };
    let taxa = computed.len();
    let flagged = computed.iter().filter(|r| r.contaminant).count();
    let mut rows = computed;
    rows.truncate(MAX_ROWS);
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut notes = vec![if method == DecontamMethod::Frequency {
        format!(
            "Taxa at rank {rank} scored by {} over {} true sample{}; a score below {threshold} calls a taxon a contaminant. Nothing is subtracted.",
            method.label(),
            samples.len(),
            plural(samples.len())
        )
    } else {
        format!(
            "Taxa at rank {rank} scored by {} against {} ({} negative control{}, {} true sample{}); a score below {threshold} calls a taxon a contaminant. Nothing is subtracted.",
            method.label(),
            if batch_by.is_some() { "each batch's controls" } else { "the controls" },
            controls.len(),
            plural(controls.len()),
            samples.len(),
            plural(samples.len())
        )
    }];
    if method != DecontamMethod::Frequency {
        notes.push("Prevalence: present in a larger share of the controls than of the true samples (one-sided two-proportion test with continuity correction; Fisher's exact mid-p where a count expected under no difference is below 5). A taxon in every sample scores 0.5; one in fewer than two samples is not scored.".to_string());
    }
    if method != DecontamMethod::Prevalence {
        notes.push(format!(
            "Frequency: a share falling as the DNA concentration (field \"{conc_field}\") rises, as a fixed amount of contaminating DNA makes it; F test of the fits with slope −1 and slope 0 on log scales."
        ));
    }
    if asked.is_none() && method == DecontamMethod::Prevalence && !missing_conc.is_empty() {
        notes.push(format!(
            "The frequency method is left out: {} true sample{} have no DNA concentration in \"{conc_field}\": {}.",
            missing_conc.len(),
            plural(missing_conc.len()),
            some_missing()
        ));
    }
    if let Some(n) = empty_note {
        notes.push(n);
    }
    if let Some(b) = batch_by {
        let without = without_batch;
        notes.push(format!(
            "Batches by \"{b}\": each scored apart, the lowest score kept{}; a batch without a control has no prevalence score.",
            if without > 0 { format!(" ({without} samples without the field form one batch)") } else { String::new() }
        ));
    }
    if taxa > rows.len() {
        notes.push(format!("The {} lowest scores of {taxa} taxa are listed.", rows.len()));
    }
    notes.push(marking);
    if !show_host {
        notes.push("The host's taxa are left out.".to_string());
    }
    Ok(ContaminationView {
        method: match method {
            DecontamMethod::Prevalence => "prevalence",
            DecontamMethod::Frequency => "frequency",
            DecontamMethod::Combined => "combined",
        }
        .into(),
        method_label: method.label().into(),
        threshold,
        rank,
        controls,
        samples,
        rows,
        taxa,
        flagged,
        skipped,
        notes,
        batch_of: None,
    })
}

/// The version of the scoring the service's controls job runs: a new one is a new job (and
/// analyses waiting for the old one wait for a worker of the old version), so it changes only
/// when the scores would.
pub const SCORING_VERSION: &str = "1";

/// The arguments of the service's controls job, as JSON Schema: what [`score_controls`] reads.
pub fn controls_args_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "method": {
                "type": "string",
                "enum": ["prevalence", "frequency", "combined"],
                "description": "decontam's method; unset: combined where every true sample has a DNA concentration, else prevalence"
            },
            "threshold": {
                "type": "number", "minimum": 0, "maximum": 1, "default": mgds_diversity::DECONTAM_THRESHOLD,
                "description": "A taxon whose score is below this is called a contaminant"
            },
            "rank": {
                "type": "string",
                "enum": ["species", "genus", "family", "order", "class", "phylum"],
                "default": "species",
                "description": "The rank taxa are scored at"
            },
            "batch_field": {
                "type": "string", "maxLength": mgds_api::MAX_CUSTOM_METADATA_KEY_CHARS,
                "description": "The custom metadata field naming the control's batch; unset: the first the control has of sequencing_batch, batch, run_id"
            },
            "concentration_field": {
                "type": "string", "maxLength": mgds_api::MAX_CUSTOM_METADATA_KEY_CHARS, "default": CONCENTRATION_FIELD,
                "description": "The custom metadata field holding each sample's DNA concentration (frequency method)"
            },
            "show_host": {
                "type": "boolean", "default": false,
                "description": "Score the host's taxa too"
            }
        }
    })
}

/// Scores a control's batch for the service's controls analyses (`mgds_api::controls`): the
/// same scoring as [`prepare`], on the samples and classifications the service found, with the
/// job's arguments ([`controls_args_schema`]).
pub fn score_controls(input: ControlsInput) -> Result<ControlsOutput, String> {
    let text = |k: &str| input.args.get(k).and_then(|v| v.as_str()).map(String::from);
    let req = ContaminationRequest {
        samples: Vec::new(),
        rank: text("rank").unwrap_or_else(|| "species".into()),
        method: text("method"),
        threshold: input.args.get("threshold").and_then(serde_json::Value::as_f64),
        concentration_field: text("concentration_field"),
        batch_by: None,
        show_host: input.args.get("show_host").and_then(serde_json::Value::as_bool).unwrap_or(false),
    };
    let checked = check(&req).map_err(|e| e.message)?;
    let mut samples = Vec::with_capacity(input.samples.len());
    let mut skipped = Vec::new();
    for s in input.samples {
        match s.results {
            Some(results) => samples.push(Scored { id: s.id, name: s.name, metadata: Some(s.metadata), results }),
            None => skipped.push(SkippedSample {
                id: s.id,
                name: shown_text(&s.name),
                why: s.missing.unwrap_or_else(|| "it has no finished classification".into()),
            }),
        }
    }
    // Said plainly before decontam's own refusals, which speak of a comparison.
    if samples.len() < 2 {
        return Err(format!(
            "none of the batch's other samples has a finished classification yet ({} in the batch); run this job again once they have",
            skipped.len() + samples.len().saturating_sub(1)
        ));
    }
    let control_reads: f64 = {
        let r = [samples[0].results.as_ref()];
        crate::diversity::table(&r, &checked.rank, checked.show_host, &|t, _| Some(t.readcount_w_children as f64))
            .1
            .iter()
            .flatten()
            .sum()
    };
    if control_reads <= 0.0 {
        return Err(format!(
            "the control has no reads at rank {}, so there is nothing to score the batch against; score at a higher rank (genus, family) to use what it holds",
            checked.rank
        ));
    }
    let mut view = score(&checked, samples, skipped).map_err(|e| e.message)?;
    view.notes.insert(
        0,
        format!(
            "The batch: the samples of the control's project (else its owner's samples outside projects) whose field \"{}\" is \"{}\" ({} controls, {} true samples scored).",
            shown_text(&input.batch_field),
            shown_text(&input.batch),
            view.controls.len(),
            view.samples.len()
        ),
    );
    view.batch_of = Some(ControlBatch { control: input.control, field: input.batch_field, value: input.batch });
    let mut table_csv = Vec::new();
    view.write_table(&mut table_csv, b',').map_err(|e| e.message)?;
    let scored = view.controls.iter().chain(&view.samples).map(|s| s.id.clone()).collect();
    let results = serde_json::to_value(&view).map_err(|e| format!("the scores could not be written: {e}"))?;
    Ok(ControlsOutput { results, table_csv, scored })
}

fn row(
    j: usize,
    tax_id: &str,
    name: &str,
    s: &ContaminantScore,
    shares: &[Vec<f64>],
    control: &[bool],
) -> ContaminantRow {
    let (mut in_c, mut in_s, mut sum_c, mut sum_s) = (0, 0, 0.0, 0.0);
    for (r, &c) in shares.iter().zip(control) {
        let v = r.get(j).copied().unwrap_or(0.0);
        if c {
            in_c += usize::from(v > 0.0);
            sum_c += v;
        } else {
            in_s += usize::from(v > 0.0);
            sum_s += v;
        }
    }
    let n_c = control.iter().filter(|&&c| c).count().max(1) as f64;
    let n_s = control.iter().filter(|&&c| !c).count().max(1) as f64;
    ContaminantRow {
        tax_id: tax_id.to_string(),
        name: shown_text(name),
        score: s.score,
        prevalence: s.prevalence,
        frequency: s.frequency,
        contaminant: s.contaminant,
        in_controls: in_c,
        in_samples: in_s,
        mean_share_controls: sum_c / n_c,
        mean_share_samples: sum_s / n_s,
    }
}

impl ContaminationView {
    /// Writes every listed taxon's scores as delimited text, the method and notes after them as
    /// `#` lines.
    pub fn write_table(&self, mut out: impl std::io::Write, delimiter: u8) -> CmdResult<()> {
        let err = |e: csv::Error| CmdError::new("file", sentence(&e.to_string()));
        let file = |e: std::io::Error| CmdError::new("file", sentence(&e.to_string()));
        let num = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_default();
        {
            let mut w = csv::WriterBuilder::new().delimiter(delimiter).from_writer(&mut out);
            w.write_record([
                "tax_id",
                "name",
                "score",
                "contaminant",
                "prevalence_score",
                "frequency_score",
                "in_controls",
                "in_samples",
                "mean_share_controls",
                "mean_share_samples",
            ])
            .map_err(err)?;
            for r in &self.rows {
                w.write_record([
                    r.tax_id.clone(),
                    r.name.clone(),
                    num(r.score),
                    if r.contaminant { "yes" } else { "no" }.into(),
                    num(r.prevalence),
                    num(r.frequency),
                    r.in_controls.to_string(),
                    r.in_samples.to_string(),
                    format!("{}", r.mean_share_controls),
                    format!("{}", r.mean_share_samples),
                ])
                .map_err(err)?;
            }
            w.flush().map_err(file)?;
        }
        let names = |s: &[ContaminationSample]| s.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ");
        writeln!(out, "# Controls: {}", names(&self.controls)).map_err(file)?;
        for n in &self.notes {
            writeln!(out, "# {n}").map_err(file)?;
        }
        out.flush().map_err(file)
    }

    /// The tax ids called contaminants (for the comparison to mark or leave out).
    pub fn flagged_taxa(&self) -> Vec<String> {
        self.rows.iter().filter(|r| r.contaminant).map(|r| r.tax_id.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::id_of;

    fn meta(pairs: &[(&str, &str)]) -> mgds_api::MetadataInput {
        let custom: serde_json::Map<String, serde_json::Value> =
            pairs.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect();
        mgds_api::MetadataInput { custom: Some(custom), ..Default::default() }
    }

    /// The service's controls analysis on a real local service (demo references, one worker):
    /// run on a blank, it scores the blank's run (its owner's samples with the same run_id; not
    /// another run's, not another user's), names a member without a classification, scores as
    /// the comparison's contaminants view scores the same samples, and the run's samples' pages
    /// learn what it flagged.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_controls_analysis_scores_the_blanks_run_as_the_comparison_does() {
        let dir = tempfile::tempdir().unwrap();
        let with = crate::testing::With { demo: true, workers: 1 };
        let service = crate::testing::TestService::start(&dir.path().join("data"), with).await;
        let lab = service.user("lab@example.org").await;
        let other = service.user("other@example.org").await;
        let reads = dir.path().join("demo.fastq.gz");
        mgds_server::references::write_demo_reads(&reads).unwrap();
        let upload = |client: &mgds_client::Client, name: &str, m: mgds_api::MetadataInput| {
            let (client, copy) = (client.clone(), dir.path().join(name));
            std::fs::copy(&reads, &copy).unwrap();
            async move {
                let s = client.samples().upload(&copy).metadata(m).send().await.unwrap();
                let c = s.primary_classification.expect("the default classification").id().to_string();
                assert!(client.jobs().wait(c.as_str()).send().await.unwrap().success);
                id_of(&s.uri)
            }
        };
        let blank = upload(&lab, "blank.fastq.gz", meta(&[("control", "Extraction blank"), ("run_id", "R-1")])).await;
        let a = upload(&lab, "a.fastq.gz", meta(&[("run_id", "R-1")])).await;
        let b = upload(&lab, "b.fastq.gz", meta(&[("run_id", "R-1")])).await;
        let elsewhere = upload(&lab, "c.fastq.gz", meta(&[("run_id", "R-2")])).await;
        let theirs = upload(&other, "d.fastq.gz", meta(&[("run_id", "R-1")])).await;
        let waiting = lab.samples().preupload().metadata(meta(&[("run_id", "R-1")])).send().await.unwrap().sample_id;

        let jobs = crate::samples::lookups(&lab).await.unwrap().jobs;
        let job = jobs.iter().find(|j| j.kind == "control").expect("a controls job").id.clone();
        let mut args = serde_json::Map::new();
        args.insert("threshold".into(), serde_json::json!(0.6));
        let analysis = lab.jobs().run(job.as_str(), blank.as_str()).args(args).send().await.unwrap();
        let id = analysis.id().to_string();
        let done = lab.jobs().wait(id.as_str()).send().await.unwrap();
        assert!(done.success, "{done:?}");

        let v = crate::results::controls(&lab, &id).await.unwrap();
        let batch = v.batch_of.clone().expect("the batch");
        assert_eq!(
            (batch.control.as_str(), batch.field.as_str(), batch.value.as_str()),
            (blank.as_str(), "run_id", "R-1")
        );
        let ids = |s: &[ContaminationSample]| s.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&v.controls), std::slice::from_ref(&blank));
        let mut scored = ids(&v.samples);
        scored.sort();
        let mut want = vec![a.clone(), b.clone()];
        want.sort();
        assert_eq!(scored, want, "the run's samples of the blank's owner, no other run's, no one else's");
        assert_eq!(v.skipped.len(), 1, "{:?}", v.skipped);
        assert_eq!(
            (v.skipped[0].id.as_str(), v.skipped[0].why.as_str()),
            (waiting.as_str(), "it has no finished classification")
        );
        assert!(v.flagged > 0 && v.threshold == 0.6, "{v:?}");

        // The comparison's view of the same samples scores the same.
        let cache = crate::compare::CompareCache::with_budget(64 << 20);
        let src = Source { client: &lab, base_url: &service.url, cache: &cache };
        let req = ContaminationRequest {
            samples: vec![blank.clone(), a.clone(), b.clone()],
            rank: "species".into(),
            method: None,
            threshold: Some(0.6),
            concentration_field: None,
            batch_by: None,
            show_host: false,
        };
        let compared = prepare(src, &req, &|_| {}).await.unwrap();
        let key = |v: &ContaminationView| {
            v.rows.iter().map(|r| (r.tax_id.clone(), r.score, r.contaminant)).collect::<Vec<_>>()
        };
        assert_eq!(key(&v), key(&compared));

        // The run's samples' pages learn what it flagged; others' do not.
        let marks = crate::results::sample_contaminants(&lab, &a).await.unwrap().expect("a's run was scored");
        assert_eq!((marks.analysis_id.as_str(), marks.control_name.as_str()), (id.as_str(), "blank.fastq.gz"));
        assert_eq!(marks.flagged.len(), v.flagged);
        assert!(crate::results::sample_contaminants(&lab, &elsewhere).await.unwrap().is_none());
        assert!(crate::results::sample_contaminants(&other, &theirs).await.unwrap().is_none());
        assert!(other.samples().controls(a.as_str()).await.is_err(), "another user's sample is not listed to them");
    }
}
