//! `where` and `sort` of arbitrary text against the samples' fields: SQL with every value bound,
//! or a message, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mgds_server::listing::{compile_sort, compile_where};
use mgds_server::store::samples::SAMPLE_FIELDS;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(c) = compile_where(SAMPLE_FIELDS, Some(text)) {
        assert_eq!(c.sql.matches('?').count(), c.binds.len(), "{}", c.sql);
    }
    if let Ok(sql) = compile_sort(SAMPLE_FIELDS, Some(text), "s.created_at ASC", "s.id ASC") {
        assert!(!sql.contains('?') && !sql.contains('\''), "{sql}");
    }
});
