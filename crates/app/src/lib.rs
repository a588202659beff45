//! The application behind MGDS's screens, whoever shows them: what the samples and analyses
//! pages, the comparison, documents, projects, the organisation, batch runs, uploads and taxon reads ask of a
//! service and make of its answers. It is a client of API v1 (`mgds-client`) and knows nothing
//! of windows: the desktop shell (`src-tauri`) calls it from its commands, and sends the
//! [`events`] it reports to its window. Errors are [`error::CmdError`] (`{code, message}` in
//! words for people). The types the screens receive derive `ts_rs::TS`, from which the UI's
//! TypeScript types are generated.

pub mod analyses;
pub mod browser_uploads;
pub mod chart;
pub mod compare;
pub mod connection;
pub mod contamination;
pub mod diversity;
pub mod documents;
pub mod error;
pub mod events;
pub mod files;
pub mod organization;
pub mod people;
pub mod projects;
pub mod qc;
pub mod report;
pub mod results;
pub mod samples;
pub mod text;
pub mod uploads;

#[cfg(test)]
mod testing;
