//! Signed upload policies (S3 POST-policy style, SigV4 signatures) and pre-signed download
//! addresses.
//!
//! `init_upload` answers a form that the client posts back unchanged with the file; the form's
//! `policy` (base64 JSON) lists conditions on every field and on the size, and
//! `x-amz-signature` is an HMAC-SHA256 over it with a key derived from the service's secret,
//! as S3 does. The storage endpoint recomputes the signature and checks every condition.

use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value, json};
use sha2::Sha256;
use subtle::ConstantTimeEq;

type HmacSha256 = Hmac<Sha256>;

/// The bucket name of the local object store, as it appears in upload and download addresses.
pub const BUCKET: &str = "mgds";
/// How long a download address stays valid. It is also checked when used: it works only while
/// its holder may still see the record (see `store::access::key_visible`).
pub const DOWNLOAD_VALID_HOURS: u32 = 1;
/// How long the S3 store's own address, to which a checked download address of the service sends
/// the client on, stays valid: made at the moment of the download, it is followed at once. A
/// download that has started runs to its end; one resumed later goes through the service again.
pub const STORE_REDIRECT_VALID_SECONDS: u64 = 60;
const ACCESS_KEY_ID: &str = "MGDSLOCAL";
const REGION: &str = "local";
const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// Why a form or address was refused: 403 for anything about the signature or policy, 400 for
/// a size outside the allowed range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The request is not allowed (403).
    #[error("{0}")]
    Forbidden(String),
    /// The file is too large or too small (400).
    #[error("{0}")]
    BadSize(String),
}

fn forbidden(msg: impl Into<String>) -> PolicyError {
    PolicyError::Forbidden(msg.into())
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// Signs and checks upload policies and download addresses with the service's secret.
#[derive(Clone)]
pub struct Signer {
    secret: Vec<u8>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer(..)")
    }
}

/// The conditions checked once the whole file has been received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeRange {
    /// Fewest bytes allowed.
    pub min: u64,
    /// Most bytes allowed.
    pub max: u64,
}

impl SizeRange {
    /// Checks a received size.
    pub fn check(&self, n: u64) -> Result<(), PolicyError> {
        if n < self.min {
            return Err(PolicyError::BadSize(format!(
                "the file has {n} bytes but this upload expects at least {} (the size given to \
                 init_upload); start the upload again if the file changed",
                self.min
            )));
        }
        if n > self.max {
            return Err(PolicyError::BadSize(format!(
                "the file is larger than this upload allows ({} bytes); start the upload again \
                 if the file changed",
                self.max
            )));
        }
        Ok(())
    }
}

impl Signer {
    /// A signer with this secret (at least 32 random bytes, kept in the database).
    pub fn new(secret: Vec<u8>) -> Self {
        Signer { secret }
    }

    fn signing_key(&self, date: &str) -> Vec<u8> {
        signing_key(&self.secret, date, REGION)
    }

    /// The form fields for uploading one object at `key` of exactly `size` bytes (and, if
    /// given, this SHA-256) to the service's own storage endpoint, valid for `valid_for`. Fields
    /// are in the order they must be posted, before the `file` part.
    pub fn upload_form(
        &self,
        key: &str,
        size: u64,
        sha256: Option<&[u8; 32]>,
        now: DateTime<Utc>,
        valid_for: Duration,
    ) -> Map<String, Value> {
        let own = PolicyKey { access_key_id: ACCESS_KEY_ID, secret: &self.secret, region: REGION, bucket: BUCKET };
        post_policy(&own, key, size, sha256, now, valid_for)
    }
}

/// Who signs an upload form, for which bucket: the service for its own storage endpoint, or the
/// S3 store's credentials for a form the store itself checks.
pub struct PolicyKey<'a> {
    /// The access key id named in the form.
    pub access_key_id: &'a str,
    /// Its secret.
    pub secret: &'a [u8],
    /// The region signed for.
    pub region: &'a str,
    /// The bucket the form is for.
    pub bucket: &'a str,
}

fn signing_key(secret: &[u8], date: &str, region: &str) -> Vec<u8> {
    let mut k = b"AWS4".to_vec();
    k.extend_from_slice(secret);
    let k = hmac(&k, date.as_bytes());
    let k = hmac(&k, region.as_bytes());
    let k = hmac(&k, b"s3");
    hmac(&k, b"aws4_request")
}

/// The fields of an S3 POST-policy form (SigV4) for uploading one object at `key` of exactly
/// `size` bytes, signed with `by`, valid for `valid_for`; in the order they must be posted,
/// before the `file` part. With `sha256`, the form names it (`x-amz-checksum-algorithm`,
/// `x-amz-checksum-sha256`) and the policy requires it, so the store refuses other bytes.
pub fn post_policy(
    by: &PolicyKey<'_>,
    key: &str,
    size: u64,
    sha256: Option<&[u8; 32]>,
    now: DateTime<Utc>,
    valid_for: Duration,
) -> Map<String, Value> {
    let date = now.format("%Y%m%d").to_string();
    let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
    let credential = format!("{}/{date}/{}/s3/aws4_request", by.access_key_id, by.region);
    let expiration = (now + valid_for).format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let checksum = sha256.map(|h| base64_encode(h));
    let mut conditions = vec![
        json!({"bucket": by.bucket}),
        json!(["eq", "$key", key]),
        json!({"acl": "private"}),
        json!({"success_action_status": "201"}),
        json!(["content-length-range", size, size]),
        json!({"x-amz-algorithm": ALGORITHM}),
        json!({"x-amz-credential": credential}),
        json!({"x-amz-date": amz_date}),
    ];
    if let Some(c) = &checksum {
        conditions.push(json!({CHECKSUM_ALGORITHM_FIELD: "SHA256"}));
        conditions.push(json!({CHECKSUM_SHA256_FIELD: c}));
    }
    let policy = json!({ "expiration": expiration, "conditions": conditions });
    let policy_b64 = base64_encode(policy.to_string().as_bytes());
    let signature = hex::encode(hmac(&signing_key(by.secret, &date, by.region), policy_b64.as_bytes()));
    let mut form = Map::new();
    form.insert("key".into(), key.into());
    form.insert("acl".into(), "private".into());
    form.insert("success_action_status".into(), "201".into());
    form.insert("x-amz-algorithm".into(), ALGORITHM.into());
    form.insert("x-amz-credential".into(), credential.into());
    form.insert("x-amz-date".into(), amz_date.into());
    if let Some(c) = checksum {
        form.insert(CHECKSUM_ALGORITHM_FIELD.into(), "SHA256".into());
        form.insert(CHECKSUM_SHA256_FIELD.into(), c.into());
    }
    form.insert("policy".into(), policy_b64.into());
    form.insert("x-amz-signature".into(), signature.into());
    form
}

/// The form field naming the checksum algorithm of an upload form (S3's).
pub const CHECKSUM_ALGORITHM_FIELD: &str = "x-amz-checksum-algorithm";
/// The form field holding the file's SHA-256, base64 (S3's).
pub const CHECKSUM_SHA256_FIELD: &str = "x-amz-checksum-sha256";

/// What a verified upload form allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormGrant {
    /// The object key to store the file at.
    pub key: String,
    /// The sizes allowed.
    pub size: SizeRange,
    /// The SHA-256 the file must have, when the form names one.
    pub sha256: Option<[u8; 32]>,
}

impl Signer {
    /// Checks a posted form (every field before `file`, in order) against its signed policy.
    /// Returns what it allows: the object key, the size range and the file's SHA-256 if the form
    /// names one.
    pub fn verify_form(
        &self,
        bucket: &str,
        fields: &[(String, String)],
        now: DateTime<Utc>,
    ) -> Result<FormGrant, PolicyError> {
        let get = |name: &str| fields.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
        for (name, _) in fields {
            if fields.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).count() > 1 {
                return Err(forbidden(format!("the form field {name:?} is given more than once")));
            }
        }
        let policy_b64 = get("policy").ok_or_else(|| forbidden("the form has no policy field"))?;
        let signature = get("x-amz-signature").ok_or_else(|| forbidden("the form has no x-amz-signature field"))?;
        let credential = get("x-amz-credential").ok_or_else(|| forbidden("the form has no x-amz-credential field"))?;
        if get("x-amz-algorithm") != Some(ALGORITHM) {
            return Err(forbidden(format!("x-amz-algorithm must be {ALGORITHM}")));
        }
        let mut parts = credential.split('/');
        let (Some(access), Some(date), Some(region), Some("s3"), Some("aws4_request"), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(forbidden("x-amz-credential is malformed"));
        };
        if access != ACCESS_KEY_ID || region != REGION {
            return Err(forbidden("x-amz-credential names an unknown access key"));
        }
        let expected = hex::encode(hmac(&self.signing_key(date), policy_b64.as_bytes()));
        if !bool::from(expected.as_bytes().ct_eq(signature.trim().to_ascii_lowercase().as_bytes())) {
            return Err(forbidden(
                "the policy signature does not match: the form was changed or was not issued by this service",
            ));
        }
        let policy: Value = base64_decode(policy_b64)
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(|| forbidden("the policy is not base64-encoded JSON"))?;
        let expiration = policy
            .get("expiration")
            .and_then(Value::as_str)
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .ok_or_else(|| forbidden("the policy has no valid expiration"))?;
        if expiration <= now {
            return Err(forbidden("the upload policy has expired; start the upload again with init_upload"));
        }
        let conditions = policy
            .get("conditions")
            .and_then(Value::as_array)
            .ok_or_else(|| forbidden("the policy has no conditions"))?;

        let value_of = |name: &str| -> Option<String> {
            if name.eq_ignore_ascii_case("bucket") { Some(bucket.to_string()) } else { get(name).map(str::to_string) }
        };
        let mut covered: Vec<String> = Vec::new();
        let mut size: Option<SizeRange> = None;
        for c in conditions {
            match c {
                Value::Object(map) => {
                    for (name, want) in map {
                        let want = want.as_str().ok_or_else(|| forbidden("a policy condition is malformed"))?;
                        let got = value_of(name).ok_or_else(|| {
                            forbidden(format!("the form has no {name:?} field, which the policy requires"))
                        })?;
                        if got != want {
                            return Err(forbidden(format!("the form field {name:?} does not match the policy")));
                        }
                        covered.push(name.to_ascii_lowercase());
                    }
                }
                Value::Array(items) => match items.first().and_then(Value::as_str) {
                    Some(op @ ("eq" | "starts-with")) => {
                        let (Some(field), Some(want)) = (
                            items.get(1).and_then(Value::as_str).and_then(|f| f.strip_prefix('$')),
                            items.get(2).and_then(Value::as_str),
                        ) else {
                            return Err(forbidden("a policy condition is malformed"));
                        };
                        let got = value_of(field).ok_or_else(|| {
                            forbidden(format!("the form has no {field:?} field, which the policy requires"))
                        })?;
                        let ok = if op == "eq" { got == want } else { got.starts_with(want) };
                        if !ok {
                            return Err(forbidden(format!("the form field {field:?} does not match the policy")));
                        }
                        covered.push(field.to_ascii_lowercase());
                    }
                    Some("content-length-range") => {
                        let (Some(min), Some(max)) =
                            (items.get(1).and_then(Value::as_u64), items.get(2).and_then(Value::as_u64))
                        else {
                            return Err(forbidden("a policy condition is malformed"));
                        };
                        size = Some(SizeRange { min, max });
                    }
                    _ => return Err(forbidden("the policy has a condition this service does not know")),
                },
                _ => return Err(forbidden("a policy condition is malformed")),
            }
        }
        for (name, _) in fields {
            let lower = name.to_ascii_lowercase();
            let exempt =
                matches!(lower.as_str(), "policy" | "x-amz-signature" | "file") || lower.starts_with("x-ignore-");
            if !exempt && !covered.contains(&lower) {
                return Err(forbidden(format!("the form field {name:?} is not covered by the policy")));
            }
        }
        let key = get("key").ok_or_else(|| forbidden("the form has no key field"))?.to_string();
        if !covered.iter().any(|c| c == "key") {
            return Err(forbidden("the policy does not restrict the key"));
        }
        let size = size.ok_or_else(|| forbidden("the policy has no content-length-range"))?;
        // A checksum counts only as the policy signed it (every field is covered by now).
        let sha256 = match (get(CHECKSUM_ALGORITHM_FIELD), get(CHECKSUM_SHA256_FIELD)) {
            (None, None) => None,
            (Some(a), Some(v)) if a.eq_ignore_ascii_case("SHA256") => Some(
                base64_decode(v)
                    .and_then(|b| <[u8; 32]>::try_from(b).ok())
                    .ok_or_else(|| forbidden(format!("{CHECKSUM_SHA256_FIELD} is not a base64 SHA-256")))?,
            ),
            _ => {
                return Err(forbidden(format!(
                    "the form must name SHA256 in {CHECKSUM_ALGORITHM_FIELD} with its {CHECKSUM_SHA256_FIELD}"
                )));
            }
        };
        Ok(FormGrant { key, size, sha256 })
    }

    fn download_mac(&self, key: &str, expires: i64, filename: &str, holder: &str) -> String {
        let msg = format!("GET\n{BUCKET}\n{key}\n{expires}\n{filename}\n{holder}");
        hex::encode(hmac(&self.secret, msg.as_bytes()))
    }

    /// Query string of a pre-signed GET for `key`, served as `filename`, for the user `holder`
    /// (empty: anyone, for a public record), valid until `expires`.
    pub fn download_query(&self, key: &str, filename: &str, holder: &str, expires: DateTime<Utc>) -> String {
        let e = expires.timestamp();
        format!(
            "expires={e}&filename={}&holder={}&signature={}",
            url_encode(filename),
            url_encode(holder),
            self.download_mac(key, e, filename, holder)
        )
    }

    /// A pre-signed address, under the service's address `public_url`, to GET `key` as
    /// `filename`, for the user `holder` (empty: anonymous), valid for `hours`.
    pub fn download_url(&self, public_url: &str, key: &str, filename: &str, holder: &str, hours: u32) -> String {
        let expires = Utc::now() + Duration::hours(i64::from(hours));
        let path: Vec<String> = key.split('/').map(url_encode).collect();
        format!(
            "{public_url}/storage/{BUCKET}/{}?{}",
            path.join("/"),
            self.download_query(key, filename, holder, expires)
        )
    }

    /// Checks a pre-signed GET.
    pub fn verify_download(
        &self,
        key: &str,
        expires: i64,
        filename: &str,
        holder: &str,
        signature: &str,
        now: DateTime<Utc>,
    ) -> Result<(), PolicyError> {
        let expected = self.download_mac(key, expires, filename, holder);
        if !bool::from(expected.as_bytes().ct_eq(signature.as_bytes())) {
            return Err(forbidden("the download address is not valid; ask the service for a new one"));
        }
        if expires <= now.timestamp() {
            return Err(forbidden("the download address has expired; ask the service for a new one"));
        }
        Ok(())
    }
}

/// The address, under the service's address `public_url`, that upload forms are posted to.
pub fn upload_url(public_url: &str) -> String {
    format!("{public_url}/storage/{BUCKET}")
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s.trim()).ok()
}

/// Percent-encodes a query component (everything but unreserved characters).
pub fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer() -> Signer {
        Signer::new(vec![7; 32])
    }

    fn form_fields(form: &Map<String, Value>) -> Vec<(String, String)> {
        form.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect()
    }

    #[test]
    fn a_signed_form_verifies() {
        let now = Utc::now();
        let form = signer().upload_form("samples/a/x.fq", 10, None, now, Duration::hours(1));
        let grant = signer().verify_form(BUCKET, &form_fields(&form), now).unwrap();
        assert_eq!(grant.key, "samples/a/x.fq");
        assert_eq!(grant.size, SizeRange { min: 10, max: 10 });
        assert_eq!(grant.sha256, None);
        let size = grant.size;
        assert!(size.check(9).is_err() && size.check(11).is_err() && size.check(10).is_ok());
    }

    #[test]
    fn a_declared_checksum_is_signed_and_cannot_be_changed_or_dropped() {
        let now = Utc::now();
        let sha = [0xab; 32];
        let form = signer().upload_form("samples/a/x.fq", 10, Some(&sha), now, Duration::hours(1));
        let grant = signer().verify_form(BUCKET, &form_fields(&form), now).unwrap();
        assert_eq!(grant.sha256, Some(sha));
        let mut changed = form_fields(&form);
        let at = changed.iter().position(|(k, _)| k == CHECKSUM_SHA256_FIELD).unwrap();
        changed[at].1 = base64_encode(&[0xcd; 32]);
        assert!(signer().verify_form(BUCKET, &changed, now).is_err(), "another checksum is refused");
        let dropped: Vec<_> =
            form_fields(&form).into_iter().filter(|(k, _)| !k.starts_with("x-amz-checksum")).collect();
        assert!(signer().verify_form(BUCKET, &dropped, now).is_err(), "the policy requires it");
        // A form signed without one cannot gain one.
        let plain = signer().upload_form("samples/a/x.fq", 10, None, now, Duration::hours(1));
        let mut added = form_fields(&plain);
        added.insert(6, (CHECKSUM_SHA256_FIELD.into(), base64_encode(&sha)));
        assert!(signer().verify_form(BUCKET, &added, now).is_err());
    }

    #[test]
    fn tampering_is_refused() {
        let now = Utc::now();
        let form = signer().upload_form("samples/a/x.fq", 10, None, now, Duration::hours(1));
        let mut f = form_fields(&form);
        f[0].1 = "samples/b/x.fq".into();
        assert!(matches!(signer().verify_form(BUCKET, &f, now), Err(PolicyError::Forbidden(m)) if m.contains("key")));
        let mut f = form_fields(&form);
        f.push(("x-extra".into(), "1".into()));
        assert!(
            matches!(signer().verify_form(BUCKET, &f, now), Err(PolicyError::Forbidden(m)) if m.contains("not covered"))
        );
        let f = form_fields(&form);
        assert!(signer().verify_form("other", &f, now).is_err());
        assert!(Signer::new(vec![8; 32]).verify_form(BUCKET, &f, now).is_err());
        let later = now + Duration::hours(2);
        assert!(
            matches!(signer().verify_form(BUCKET, &f, later), Err(PolicyError::Forbidden(m)) if m.contains("expired"))
        );
    }

    #[test]
    fn download_signatures() {
        let s = signer();
        let now = Utc::now();
        let q = s.download_query("k", "a b.pdf", "u1", now + Duration::hours(1));
        assert!(q.contains("filename=a%20b.pdf") && q.contains("holder=u1"));
        let e = (now + Duration::hours(1)).timestamp();
        let sig = s.download_mac("k", e, "a b.pdf", "u1");
        assert!(s.verify_download("k", e, "a b.pdf", "u1", &sig, now).is_ok());
        assert!(s.verify_download("k2", e, "a b.pdf", "u1", &sig, now).is_err());
        assert!(s.verify_download("k", e, "a b.pdf", "u2", &sig, now).is_err(), "the holder is signed");
        assert!(s.verify_download("k", e, "a b.pdf", "u1", &sig, now + Duration::hours(2)).is_err());
    }
}
