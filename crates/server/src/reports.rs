//! Reports as analyses (the reference's `/reports`): the "Sample report" job, run on a sample,
//! makes a PDF of the sample's file and metadata, read quality, abundances, diversity, panel
//! results and methods (`mgds_report::sample`), from what the service has stored for it
//! ([`crate::store::reports`]). `/reports/{id}/files` serves the PDF; the results say what it
//! holds and from which analyses.

use mgds_report::sample::{MadeBy, SampleInput, sample_report};
use serde_json::{Value, json};

use crate::store::jobs::JobSpec;
use crate::store::reports::{Made, ReportInput};

/// The job's engine name.
pub const ENGINE: &str = "mgds-report";
/// The job's name.
pub const JOB_NAME: &str = "Sample report (PDF)";
/// The version of what a report holds.
pub const REPORT_VERSION: &str = "1";

/// The report job, registered by every service (it needs no reference data).
pub fn job_spec() -> JobSpec {
    JobSpec {
        name: JOB_NAME.into(),
        analysis_type: "report".into(),
        job_args_schema: json!({"type": "object", "additionalProperties": false, "properties": {}}),
        public: true,
        draft: false,
        creator_id: None,
        engine: ENGINE.into(),
        // A new version is a new job (and analyses waiting for the old one wait for a worker of
        // the old version): it changes only when what a report holds does.
        engine_version: REPORT_VERSION.into(),
        reference: String::new(),
    }
}

fn made_by(m: &Made) -> MadeBy {
    MadeBy {
        analysis_id: m.analysis_id.clone(),
        job_name: m.job_name.clone(),
        engine: m.engine.clone(),
        engine_version: m.engine_version.clone(),
        reference_digest: m.reference.clone(),
        args: m.args.clone(),
        finished_at: m.finished_at.clone(),
    }
}

/// The report of `input` as PDF, and the results that describe it; the reason in words when it
/// cannot be made.
pub fn make(input: &ReportInput) -> Result<(Value, Vec<u8>), String> {
    let made = crate::store::db::now();
    let sample = SampleInput {
        lab: mgds_report::Lab { name: input.lab.clone(), logo: None },
        made: made.clone(),
        sample_id: input.sample_id.clone(),
        filename: input.filename.clone(),
        size: input.size,
        uploaded: input.uploaded.clone(),
        metadata: input.metadata.as_ref(),
        classification: input.classification.as_ref().map(|(r, m)| (r.as_ref(), made_by(m))),
        panel: input.panel.as_ref().map(|(r, m)| (r.as_ref(), made_by(m))),
        made_with: env!("CARGO_PKG_VERSION").into(),
    };
    let mut report = sample_report(&sample);
    report.lab.logo = input.logo.clone().map(|bytes| mgds_report::Logo { bytes });
    let pdf = match mgds_report::pdf(&report) {
        // A logo kept before a check it would fail now: the report is made without it.
        Err(mgds_report::Error::Logo | mgds_report::Error::Typeset(_)) if report.lab.logo.is_some() => {
            report.lab.logo = None;
            mgds_report::pdf(&report)
        }
        other => other,
    }
    .map_err(|e| e.to_string())?;
    let sections: Vec<&str> = report
        .blocks
        .iter()
        .filter_map(|b| match b {
            mgds_report::Block::Heading { text, level: 1 } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let results = json!({
        "title": report.title,
        "made": made,
        "format": "application/pdf",
        "bytes": pdf.len(),
        "sections": sections,
        "classification": input.classification.as_ref().map(|(_, m)| mgds_api::Ref::new("classifications", &m.analysis_id)),
        "panel": input.panel.as_ref().map(|(_, m)| mgds_api::Ref::new("panels", &m.analysis_id)),
    });
    Ok((results, pdf))
}
