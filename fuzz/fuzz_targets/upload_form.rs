//! The fields of an upload form, as arbitrary `name=value` lines: checked against the signed
//! policy without a panic, and accepted only when signed by the service.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mgds_server::signing::{BUCKET, Signer};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let fields: Vec<(String, String)> = text
        .lines()
        .map(|l| l.split_once('=').unwrap_or((l, "")))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let signer = Signer::new(b"fuzz".to_vec());
    let now = chrono::Utc::now();
    // Nobody without the secret can make a form that passes.
    assert!(signer.verify_form(BUCKET, &fields, now).is_err());
});
