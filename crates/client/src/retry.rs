//! When and how long to wait before trying a request again.
//!
//! Only what is safe is retried: a request that reads or sets state (GET, a PATCH that sets
//! fields, `confirm_upload`, sharing) on connection errors, 5xx and 429; a request that creates
//! something (`preupload`, `init_upload`, a job run, a create) only when the connection could not
//! even be made, which proves the service never saw it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How often and how patiently a request is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 means no retry).
    pub max_attempts: u32,
    /// Wait before the first retry; doubled for each further one, with jitter.
    pub initial_backoff: Duration,
    /// Longest wait between two attempts.
    pub max_backoff: Duration,
    /// Longest `Retry-After` the client waits out by itself; a longer one is returned to the
    /// caller as [`Error::RateLimited`](crate::Error::RateLimited) at once.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, waits from 250 ms doubling up to 8 s, `Retry-After` honoured up to 60 s.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> Self {
        RetryPolicy { max_attempts: 1, ..Self::default() }
    }

    /// The wait before retry number `retry` (1 for the first retry): exponential, capped at
    /// `max_backoff`, with "equal jitter" (between half the step and the whole step) so that many
    /// clients failing together do not come back together.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = retry.saturating_sub(1).min(20);
        let step = self.initial_backoff.saturating_mul(1u32 << exp).min(self.max_backoff);
        let half = step / 2;
        let extra_ms = u64::try_from(half.as_millis()).unwrap_or(u64::MAX);
        half + Duration::from_millis(if extra_ms == 0 { 0 } else { rand::random_range(0..=extra_ms) })
    }
}

/// How safe a request is to send again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idempotency {
    /// Reading, or setting state to a given value: retried on connection errors, 5xx and 429.
    Safe,
    /// Creates something: retried only when the connection could not be made.
    ConnectOnly,
}

/// Reads a `Retry-After` value: delay-seconds or an HTTP date (IMF-fixdate).
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = parse_http_date(v)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_http_date(s: &str) -> Option<SystemTime> {
    let (_, rest) = s.split_once(", ")?;
    let mut parts = rest.split(' ');
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':');
    let (h, m, sec): (u64, u64, u64) =
        (hms.next()?.parse().ok()?, hms.next()?.parse().ok()?, hms.next()?.parse().ok()?);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + sec;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after(" 7 ", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn backoff_is_bounded_and_jittered() {
        let p = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(5),
        };
        for _ in 0..50 {
            let first = p.backoff(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100), "{first:?}");
            let third = p.backoff(3);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400), "{third:?}");
            let late = p.backoff(30);
            assert!(late >= Duration::from_millis(500) && late <= Duration::from_secs(1), "{late:?}");
        }
    }
}
