//! Webhook deliveries, shared by the service's webhooks and the folder watcher's
//! `--alert-webhook`: one signed POST of a JSON body ([`Sender::send`]), the networks a delivery
//! may reach ([`Networks`]), and the wait before the next try ([`Backoff`]).
//!
//! - **Signature.** With a secret, a delivery carries `X-MGDS-Signature: t=<unix seconds>,v1=<hex>`,
//!   where the hex is the HMAC-SHA256, keyed with the secret's bytes, of `<t>.` followed by the
//!   body as sent ([`sign`], [`verify`]). The time is in the signed text, so a receiver that
//!   refuses old times cannot be fooled by a replayed delivery.
//! - **Networks.** The service's deliveries reach only public addresses unless its configuration
//!   allows a network explicitly (a lab's LIMS on `10.1.0.0/16`): a webhook cannot be made to
//!   probe the service's own machine or network. The check is made on every address the name
//!   resolves to at the moment of each delivery, and the connection goes to an address that
//!   passed it (a name that resolves differently the second time gains nothing); redirects are
//!   not followed, and no proxy is used. The watcher runs on the lab's own machine, where its
//!   user sets the address: it reaches any network.
//! - **Bounded.** Each delivery has a timeout ([`TIMEOUT`]) and keeps the first
//!   [`MAX_RESPONSE_KEPT`] bytes of the answer for the delivery log.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use ipnet::IpNet;
use sha2::Sha256;
use url::Url;

/// The header that carries the signature.
pub const SIGNATURE_HEADER: &str = "X-MGDS-Signature";
/// The header that names the event's type (`sample.confirmed`, `alert`).
pub const EVENT_HEADER: &str = "X-MGDS-Event";
/// The header that names the delivery's event, the same at every try of it (receivers drop
/// what they saw already: delivery is at least once).
pub const DELIVERY_HEADER: &str = "X-MGDS-Delivery";
/// How long one delivery may take, from connecting to the end of the answer's kept bytes.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The bytes of an answer kept for the delivery log.
pub const MAX_RESPONSE_KEPT: usize = 1024;
/// The longest `post_url` taken.
pub const MAX_URL_LEN: usize = 2048;

type HmacSha256 = Hmac<Sha256>;

/// The `X-MGDS-Signature` value of `body` sent at `timestamp` (Unix seconds), keyed with `secret`.
pub fn sign(secret: &[u8], timestamp: i64, body: &[u8]) -> String {
    format!("t={timestamp},v1={}", hex::encode(mac(secret, timestamp, body)))
}

fn mac(secret: &[u8], timestamp: i64, body: &[u8]) -> Vec<u8> {
    keyed(secret, timestamp, body).finalize().into_bytes().to_vec()
}

/// The HMAC of `<timestamp>.<body>` under `secret`, before it is finished.
fn keyed(secret: &[u8], timestamp: i64, body: &[u8]) -> HmacSha256 {
    // HMAC takes a key of any length.
    let mut m = HmacSha256::new_from_slice(secret).unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    m.update(timestamp.to_string().as_bytes());
    m.update(b".");
    m.update(body);
    m
}

/// Why a signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadSignature {
    /// The header is not `t=...,v1=...`.
    #[error("the signature header is not t=<seconds>,v1=<hex>")]
    Malformed,
    /// The time is further from now than allowed.
    #[error("the signature's time is {0} s from now, more than allowed")]
    Stale(i64),
    /// No `v1` matches the body.
    #[error("the signature does not match the body")]
    Mismatch,
}

/// Checks a signature header against `body` as received, at `now` (Unix seconds), allowing
/// `tolerance` seconds between the signature's time and now. Several `v1=` are allowed (a
/// sender in the middle of changing its secret); any one matching is enough.
pub fn verify(secret: &[u8], header: &str, body: &[u8], now: i64, tolerance: i64) -> Result<(), BadSignature> {
    let mut t = None;
    let mut sigs = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => t = v.parse::<i64>().ok(),
            Some(("v1", v)) => sigs.push(hex::decode(v).map_err(|_| BadSignature::Malformed)?),
            _ => {}
        }
    }
    let (Some(t), false) = (t, sigs.is_empty()) else { return Err(BadSignature::Malformed) };
    if now.abs_diff(t) > tolerance.unsigned_abs() {
        return Err(BadSignature::Stale(now.saturating_sub(t)));
    }
    for sig in sigs {
        if keyed(secret, t, body).verify_slice(&sig).is_ok() {
            return Ok(());
        }
    }
    Err(BadSignature::Mismatch)
}

/// Whether `ip` is not a public address: loopback, private (RFC 1918, IPv6 unique local),
/// link-local, shared (carrier-grade NAT), unspecified, multicast, broadcast, reserved, or set
/// aside for documentation and benchmarks; an IPv4 address inside IPv6 counts as itself.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared address space
                || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
                || (a == 198 && (b == 18 || b == 19)) // benchmarking
                || a >= 240 // reserved
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first & 0xffc0) == 0xfec0 // site-local (deprecated)
                || first == 0x2001 && v6.segments()[1] == 0x0db8 // documentation
                || (first == 0x0064 && v6.segments()[1] == 0xff9b) // NAT64, which reaches IPv4 inside
                || first == 0x2002 // 6to4, likewise
        }
    }
}

/// The networks deliveries may reach.
#[derive(Debug, Clone)]
pub struct Networks {
    anywhere: bool,
    allowed: Vec<IpNet>,
}

impl Networks {
    /// Public addresses, and the internal networks in `allowed` (the service's webhooks).
    pub fn public_and(allowed: Vec<IpNet>) -> Self {
        Networks { anywhere: false, allowed }
    }

    /// Every address (the watcher, on the lab's own machine).
    pub fn anywhere() -> Self {
        Networks { anywhere: true, allowed: Vec::new() }
    }

    /// Whether a delivery may connect to `ip`.
    pub fn permits(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        self.anywhere || !is_internal(ip) || self.allowed.iter().any(|n| n.contains(&ip))
    }

    /// Why `ip` (of `host`) is refused, in words.
    /// Why `host` is refused, in words. A name's resolved address is not told (it would map the
    /// service's own network for whoever registers webhooks).
    fn refusal(&self, host: &str, ip: IpAddr) -> String {
        let what = if host == ip.to_string() { ip.to_string() } else { format!("{host} resolves to an address that") };
        format!(
            "{what} is a loopback, private, link-local or reserved address, which webhooks may not reach \
             unless the service's configuration allows its network (mgds serve --webhook-allow-network)"
        )
    }
}

/// Checks a webhook's address as given: `http` or `https`, a host, no user name or password
/// (a secret in an address ends up in logs; the signature proves the sender instead), at most
/// [`MAX_URL_LEN`] characters. The error says what to change.
pub fn check_url(text: &str) -> Result<Url, String> {
    if text.len() > MAX_URL_LEN {
        return Err(format!("post_url is longer than {MAX_URL_LEN} characters"));
    }
    let url = Url::parse(text.trim()).map_err(|e| format!("post_url {text:?} is not an address: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("post_url must be an http:// or https:// address, not {}://", url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("post_url has no host".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("post_url may not carry a user name or password: receivers check the signature instead".into());
    }
    Ok(url)
}

/// Resolves names to the addresses [`Networks`] permits, so the connection goes to a checked
/// address.
struct Guard(Arc<Networks>);

/// A name with no address deliveries may reach.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(String);

impl reqwest::dns::Resolve for Guard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let networks = self.0.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let (ok, refused): (Vec<SocketAddr>, Vec<SocketAddr>) =
                found.into_iter().partition(|a| networks.permits(a.ip()));
            match (ok.is_empty(), refused.first()) {
                (false, _) => Ok(Box::new(ok.into_iter()) as reqwest::dns::Addrs),
                (true, Some(a)) => Err(Box::new(Refused(networks.refusal(&host, a.ip()))) as _),
                (true, None) => Err(Box::new(Refused(format!("{host} has no address"))) as _),
            }
        })
    }
}

/// One delivery to make.
#[derive(Debug, Clone, Copy)]
pub struct Delivery<'a> {
    /// Where to POST.
    pub url: &'a Url,
    /// The event's type, sent as [`EVENT_HEADER`].
    pub event_type: &'a str,
    /// The event's id, sent as [`DELIVERY_HEADER`].
    pub id: &'a str,
    /// The JSON body.
    pub body: &'a [u8],
    /// The secret to sign with, if any.
    pub secret: Option<&'a [u8]>,
}

/// What one try of a delivery came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The receiver's HTTP status, if it answered.
    pub status: Option<u16>,
    /// Whether it was delivered (a 2xx answer).
    pub delivered: bool,
    /// Why not, in words.
    pub error: Option<String>,
    /// The first [`MAX_RESPONSE_KEPT`] bytes of the answer (lossy UTF-8).
    pub response: String,
    /// How long the try took.
    pub took: Duration,
}

impl Attempt {
    /// Whether the receiver refused the delivery itself (a 4xx other than 408 and 429), which
    /// trying again soon will not change.
    pub fn refused(&self) -> bool {
        matches!(self.status, Some(s) if (400..500).contains(&s) && s != 408 && s != 429)
    }
}

/// Sends deliveries (cheap to clone).
#[derive(Debug, Clone)]
pub struct Sender {
    http: reqwest::Client,
    networks: Arc<Networks>,
}

impl Sender {
    /// A sender that reaches `networks`, naming itself `user_agent`.
    pub fn new(networks: Networks, user_agent: &str) -> Result<Sender, reqwest::Error> {
        let networks = Arc::new(networks);
        // reqwest's TLS needs a process-wide crypto provider; another may be installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .user_agent(user_agent)
            .timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(Guard(networks.clone())))
            .build()?;
        Ok(Sender { http, networks })
    }

    /// A sender for the lab's own machine (the watcher's alerts): any network, the system's
    /// proxy settings, up to 5 redirects followed, 20 s per try.
    pub fn on_own_machine(user_agent: &str) -> Result<Sender, reqwest::Error> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .user_agent(user_agent)
            .timeout(Duration::from_secs(20))
            .redirect(reqwest::redirect::Policy::limited(5))
            .build()?;
        Ok(Sender { http, networks: Arc::new(Networks::anywhere()) })
    }

    /// Checks that `url` reaches a permitted address now (before registering it), saying why not.
    pub async fn check_reachable(&self, url: &Url) -> Result<(), String> {
        let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_string();
        let port = url.port_or_known_default().unwrap_or(80);
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect();
        match found.iter().find(|a| !self.networks.permits(a.ip())) {
            Some(a) => Err(self.networks.refusal(&host, a.ip())),
            None if found.is_empty() => Err(format!("{host} has no address")),
            None => Ok(()),
        }
    }

    /// POSTs one delivery once.
    pub async fn send(&self, d: &Delivery<'_>) -> Attempt {
        let started = Instant::now();
        let failed = |error: String| Attempt {
            status: None,
            delivered: false,
            error: Some(error),
            response: String::new(),
            took: started.elapsed(),
        };
        // An address given as a number is not resolved: check it here.
        if let Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) = d.url.host() {
            let host = d.url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
            if let Ok(ip) = host.parse::<IpAddr>()
                && !self.networks.permits(ip)
            {
                return failed(self.networks.refusal(host, ip));
            }
        }
        let timestamp = unix_now();
        let mut req = self
            .http
            .post(d.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(EVENT_HEADER, d.event_type)
            .header(DELIVERY_HEADER, d.id)
            .body(d.body.to_vec());
        if let Some(secret) = d.secret {
            req = req.header(SIGNATURE_HEADER, sign(secret, timestamp, d.body));
        }
        let mut resp = match req.send().await {
            Ok(r) => r,
            Err(e) => return failed(describe(&e)),
        };
        let status = resp.status();
        let mut kept = Vec::new();
        while kept.len() < MAX_RESPONSE_KEPT {
            match resp.chunk().await {
                Ok(Some(chunk)) => kept.extend_from_slice(&chunk[..chunk.len().min(MAX_RESPONSE_KEPT - kept.len())]),
                Ok(None) | Err(_) => break,
            }
        }
        let delivered = status.is_success();
        let error = (!delivered).then(|| {
            if status.is_redirection() {
                format!("the receiver answered {status}; redirects are not followed: register the final address")
            } else {
                format!("the receiver answered {status}")
            }
        });
        Attempt {
            status: Some(status.as_u16()),
            delivered,
            error,
            // Text, without NUL (PostgreSQL's text refuses it; a binary answer is kept as text).
            response: String::from_utf8_lossy(&kept).replace('\0', "\u{FFFD}"),
            took: started.elapsed(),
        }
    }
}

/// An error and its causes, in one line (a refused address says why).
fn describe(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() { format!("no answer within {} s", TIMEOUT.as_secs()) } else { e.to_string() };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// The wait before a delivery's next try: `first` after the first failure, doubling after each
/// one up to `most`, each lengthened by up to a tenth at random so that deliveries held up by
/// the same outage do not all come back at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// After the first failure.
    pub first: Duration,
    /// The longest wait.
    pub most: Duration,
}

impl Backoff {
    /// The service's: 10 s, doubling to an hour (about 30 tries in a day).
    pub const SERVICE: Backoff = Backoff { first: Duration::from_secs(10), most: Duration::from_secs(3600) };

    /// The wait after `failures` failed tries (1 or more).
    pub fn after(&self, failures: u32) -> Duration {
        let doubled = self.first.saturating_mul(1u32 << failures.saturating_sub(1).min(20));
        let wait = doubled.min(self.most);
        wait + wait.mul_f64(rand::random::<f64>() * 0.1)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_signature_covers_the_time_and_the_body() {
        let sig = sign(b"s3cret", 1_700_000_000, b"{\"a\":1}");
        assert!(sig.starts_with("t=1700000000,v1="));
        assert_eq!(verify(b"s3cret", &sig, b"{\"a\":1}", 1_700_000_100, 300), Ok(()));
        assert_eq!(verify(b"s3cret", &sig, b"{\"a\":2}", 1_700_000_100, 300), Err(BadSignature::Mismatch));
        assert_eq!(verify(b"other", &sig, b"{\"a\":1}", 1_700_000_100, 300), Err(BadSignature::Mismatch));
        assert_eq!(verify(b"s3cret", &sig, b"{\"a\":1}", 1_700_001_000, 300), Err(BadSignature::Stale(1000)));
        let moved = sig.replace("t=1700000000", "t=1700000001");
        assert_eq!(verify(b"s3cret", &moved, b"{\"a\":1}", 1_700_000_100, 300), Err(BadSignature::Mismatch));
        assert_eq!(verify(b"s3cret", "v1=zz", b"", 0, 300), Err(BadSignature::Malformed));
        // A time at either end of the range is refused, not a panic.
        let far = sign(b"s3cret", i64::MIN, b"x");
        assert!(matches!(verify(b"s3cret", &far, b"x", i64::MAX, 300), Err(BadSignature::Stale(_))));
        // A second, matching v1 beside an old one is enough.
        let new = sign(b"new", 5, b"x");
        let both = format!("{},v1={}", sign(b"old", 5, b"x"), new.split("v1=").nth(1).unwrap());
        assert_eq!(verify(b"new", &both, b"x", 5, 300), Ok(()));
    }

    #[test]
    fn internal_addresses_are_told_from_public_ones() {
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:a00:1::",
        ] {
            assert!(is_internal(internal.parse().unwrap()), "{internal}");
        }
        for public in ["8.8.8.8", "151.101.1.1", "2a00:1450:4001::1", "::ffff:8.8.8.8"] {
            assert!(!is_internal(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn an_allowed_network_opens_only_itself() {
        let n = Networks::public_and(vec!["10.1.0.0/16".parse().unwrap()]);
        assert!(n.permits("10.1.2.3".parse().unwrap()));
        assert!(n.permits("::ffff:10.1.2.3".parse().unwrap()));
        assert!(!n.permits("10.2.0.1".parse().unwrap()));
        assert!(!n.permits("127.0.0.1".parse().unwrap()));
        assert!(n.permits("8.8.8.8".parse().unwrap()));
        assert!(Networks::anywhere().permits("127.0.0.1".parse().unwrap()));
    }

    #[test]
    fn addresses_are_checked_as_given() {
        assert!(check_url("https://lims.example.org/hooks/mgds").is_ok());
        assert!(check_url("ftp://lims.example.org/x").unwrap_err().contains("http"));
        assert!(check_url("https://user:pw@lims.example.org/").unwrap_err().contains("password"));
        assert!(check_url("not an address").unwrap_err().contains("not an address"));
        assert!(check_url(&format!("https://a.org/{}", "x".repeat(3000))).unwrap_err().contains("longer"));
    }

    #[test]
    fn waits_double_up_to_the_most() {
        let b = Backoff { first: Duration::from_secs(10), most: Duration::from_secs(60) };
        let within =
            |d: Duration, base: u64| d >= Duration::from_secs(base) && d <= Duration::from_secs(base) * 11 / 10;
        assert!(within(b.after(1), 10));
        assert!(within(b.after(2), 20));
        assert!(within(b.after(3), 40));
        assert!(within(b.after(4), 60));
        assert!(within(b.after(60), 60));
    }

    /// A receiver on loopback that answers `status`, and what it received.
    async fn receiver(status: u16) -> (Url, tokio::sync::mpsc::UnboundedReceiver<(axum::http::HeaderMap, Vec<u8>)>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let app = axum::Router::new().fallback(move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                let _ = tx.send((headers, body.to_vec()));
                let mut r = axum::response::IntoResponse::into_response("seen");
                *r.status_mut() = axum::http::StatusCode::from_u16(status).unwrap();
                if status == 302 {
                    r.headers_mut().insert("location", "http://127.0.0.1:9/".parse().unwrap());
                }
                r
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (Url::parse(&format!("http://localhost:{}/hook", addr.port())).unwrap(), rx)
    }

    fn delivery<'a>(url: &'a Url, secret: Option<&'a [u8]>) -> Delivery<'a> {
        Delivery { url, event_type: "sample.confirmed", id: "e1", body: b"{\"type\":\"sample.confirmed\"}", secret }
    }

    #[tokio::test]
    async fn loopback_is_refused_unless_allowed_and_a_delivery_is_signed() {
        let (url, mut seen) = receiver(204).await;
        let public = Sender::new(Networks::public_and(vec![]), "test").unwrap();
        // By name (through the resolver) and by number.
        let refused = public.send(&delivery(&url, None)).await;
        assert!(!refused.delivered && refused.status.is_none(), "{refused:?}");
        assert!(refused.error.as_deref().unwrap().contains("--webhook-allow-network"), "{refused:?}");
        let mut numeric = url.clone();
        numeric.set_host(Some("127.0.0.1")).unwrap();
        assert!(public.send(&delivery(&numeric, None)).await.error.unwrap().contains("loopback"));
        assert!(public.check_reachable(&url).await.unwrap_err().contains("loopback"));
        assert!(seen.try_recv().is_err(), "nothing reached the receiver");

        let allowed = Sender::new(Networks::public_and(vec!["127.0.0.0/8".parse().unwrap()]), "test").unwrap();
        allowed.check_reachable(&numeric).await.unwrap();
        let sent = allowed.send(&delivery(&numeric, Some(b"k"))).await;
        assert!(sent.delivered && sent.status == Some(204) && sent.error.is_none(), "{sent:?}");
        let (headers, body) = seen.recv().await.unwrap();
        assert_eq!(headers[EVENT_HEADER], "sample.confirmed");
        assert_eq!(headers[DELIVERY_HEADER], "e1");
        assert_eq!(headers["content-type"], "application/json");
        let sig = headers[SIGNATURE_HEADER].to_str().unwrap();
        assert_eq!(verify(b"k", sig, &body, unix_now(), 300), Ok(()));
    }

    #[tokio::test]
    async fn an_answer_other_than_2xx_is_not_a_delivery_and_redirects_are_not_followed() {
        for (status, refused) in [(500, false), (429, false), (404, true), (302, false)] {
            let (url, _seen) = receiver(status).await;
            let a = Sender::new(Networks::anywhere(), "test").unwrap().send(&delivery(&url, None)).await;
            assert!(!a.delivered && a.status == Some(status), "{a:?}");
            assert_eq!(a.refused(), refused, "{status}");
            assert_eq!(a.response, "seen");
            if status == 302 {
                assert!(a.error.unwrap().contains("redirects are not followed"));
            }
        }
        let closed = Url::parse("http://127.0.0.1:9/").unwrap();
        let a = Sender::new(Networks::anywhere(), "test").unwrap().send(&delivery(&closed, None)).await;
        assert!(!a.delivered && a.status.is_none() && a.error.is_some(), "{a:?}");
    }
}

/// A receiver for tests and for trying a webhook out on one's own machine: it answers `200` to
/// every request on a listener and passes on what each one carried.
pub mod testing {
    use std::io::{BufRead, BufReader, Read, Write};

    /// One request the receiver got.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Received {
        /// The request line's path.
        pub path: String,
        /// Its `X-MGDS-Event`.
        pub event: String,
        /// Its `X-MGDS-Delivery`.
        pub delivery: String,
        /// Its `X-MGDS-Signature` (empty when unsigned).
        pub signature: String,
        /// The body.
        pub body: Vec<u8>,
    }

    /// Answers every request on `listener` with `200`, on a thread of its own, and passes each
    /// on; stops when the other end of the channel is dropped.
    pub fn receive_on(listener: std::net::TcpListener) -> std::sync::mpsc::Receiver<Received> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let Ok(clone) = stream.try_clone() else { continue };
                let mut reader = BufReader::new(clone);
                let mut got = Received {
                    path: String::new(),
                    event: String::new(),
                    delivery: String::new(),
                    signature: String::new(),
                    body: Vec::new(),
                };
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
                }
                got.path = request_line.split_whitespace().nth(1).unwrap_or_default().to_string();
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    let (name, value) = line.split_once(':').unwrap_or_default();
                    let value = value.trim().to_string();
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.parse().unwrap_or(0),
                        "x-mgds-event" => got.event = value,
                        "x-mgds-delivery" => got.delivery = value,
                        "x-mgds-signature" => got.signature = value,
                        _ => {}
                    }
                }
                got.body = vec![0; length.min(16 << 20)];
                if reader.read_exact(&mut got.body).is_err() {
                    continue;
                }
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                if tx.send(got).is_err() {
                    return;
                }
            }
        });
        rx
    }
}
