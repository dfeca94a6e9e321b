//! Retries within one model call: exponential backoff with jitter for 429, 5xx and
//! transport failures, honouring the provider's `Retry-After`; the sleeper, the clock and
//! the random source are injected so tests never wait.

use std::sync::Mutex;
use std::time::Duration;

use crate::clock::Clock;

/// How a call retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = no retry).
    pub max_attempts: u32,
    /// The backoff before the first retry; it doubles after each.
    pub initial_backoff: Duration,
    /// The backoff never exceeds this.
    pub max_backoff: Duration,
    /// The longest `Retry-After` a call waits for; a longer one ends the call at once (the
    /// pass retries later) rather than blocking the writer.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0 for the first), given a uniform `unit` in
    /// [0, 1): half the capped exponential backoff plus a random part of the other half, so
    /// clients that failed together do not retry together.
    pub fn backoff(&self, retry: u32, unit: f64) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(30));
        let capped = self.initial_backoff.saturating_mul(factor).min(self.max_backoff);
        let unit = if unit.is_finite() { unit.clamp(0.0, 1.0) } else { 0.0 };
        capped / 2 + (capped / 2).mul_f64(unit)
    }
}

/// Waits between attempts.
pub trait Sleeper: Send + Sync {
    /// Block for `duration`.
    fn sleep(&self, duration: Duration);
}

/// The real sleeper.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadSleeper;

impl Sleeper for ThreadSleeper {
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// A source of uniform numbers in [0, 1) for the jitter.
pub trait Jitter: Send + Sync {
    /// The next number.
    fn unit(&self) -> f64;
}

/// A small xorshift generator: jitter needs spread, not cryptographic quality.
#[derive(Debug)]
pub struct XorShiftJitter {
    state: Mutex<u64>,
}

impl XorShiftJitter {
    /// A generator from `seed` (0 is replaced, xorshift cannot leave it).
    pub fn new(seed: u64) -> Self {
        XorShiftJitter { state: Mutex::new(if seed == 0 { 0x9E37_79B9_7F4A_7C15 } else { seed }) }
    }

    /// A generator seeded from the time and the process id.
    pub fn from_entropy() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos() as u64);
        XorShiftJitter::new(nanos ^ (u64::from(std::process::id()) << 32))
    }
}

impl Jitter for XorShiftJitter {
    fn unit(&self) -> f64 {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut x = *state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *state = x;
        // The top 53 bits make an exact f64 in [0, 1).
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The wait a reply asks for: `retry-after-ms` (milliseconds, OpenAI), else `retry-after`
/// as seconds (fractions allowed) or an HTTP date measured against `clock`.
pub(crate) fn retry_after(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    clock: &dyn Clock,
) -> Option<Duration> {
    if let Some(millis) = retry_after_ms.and_then(|value| value.trim().parse::<f64>().ok()) {
        return seconds(millis / 1000.0);
    }
    let value = retry_after?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return seconds(secs);
    }
    let at = parse_http_date(value)?;
    seconds(at - clock.now()).or(Some(Duration::ZERO))
}

fn seconds(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::try_from_secs_f64(secs).ok()).flatten()
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7) as Unix seconds.
fn parse_http_date(value: &str) -> Option<f64> {
    let mut parts = value.split_ascii_whitespace();
    let _weekday = parts.next()?;
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
    let mut clock = parts.next()?.split(':').map(|field| field.parse::<u32>().ok());
    let (hour, minute, second) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let days = crate::clock::days_from_civil(year, month, day);
    Some((days * 86_400 + i64::from(hour * 3600 + minute * 60 + second)) as f64)
}
