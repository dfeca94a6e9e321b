//! Time as the runtime sees it: an injected [`Clock`] (tests never read the real one),
//! and the ISO-8601 forms of spec 02 §2.2 and §2.4 without a time-zone database.

use std::time::{SystemTime, UNIX_EPOCH};

use scriptorium_transaction::civil_from_days;

/// Where the runtime gets "now" from, in Unix seconds.
pub trait Clock: Send + Sync {
    /// The current time in Unix seconds.
    fn now(&self) -> f64;
}

/// The system's real-time clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> f64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |elapsed| elapsed.as_secs_f64())
    }
}

/// (year, month, day) → days since 1970-01-01.
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Unix seconds as Python's `datetime.fromtimestamp(ts, tz).isoformat()` writes it at
/// the fixed offset `offset_seconds`: `YYYY-MM-DDTHH:MM:SS[.ffffff]+HH:MM`. `None` for a
/// stamp outside years 1..=9999 or not finite.
pub fn iso8601(epoch: f64, offset_seconds: i32) -> Option<String> {
    if !epoch.is_finite() {
        return None;
    }
    let micros_total = (epoch * 1_000_000.0).round() as i64 + i64::from(offset_seconds) * 1_000_000;
    let seconds = micros_total.div_euclid(1_000_000);
    let micros = micros_total.rem_euclid(1_000_000);
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    if !(1..=9999).contains(&year) {
        return None;
    }
    let second_of_day = seconds.rem_euclid(86_400);
    let (hour, minute, second) = (second_of_day / 3600, second_of_day % 3600 / 60, second_of_day % 60);
    let mut out = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
    if micros != 0 {
        out.push_str(&format!(".{micros:06}"));
    }
    let sign = if offset_seconds < 0 { '-' } else { '+' };
    let offset = offset_seconds.unsigned_abs();
    out.push_str(&format!("{sign}{:02}:{:02}", offset / 3600, offset % 3600 / 60));
    Some(out)
}

/// Unix seconds as ISO-8601 UTC with a `Z`-free `+00:00` suffix, for status files.
pub fn iso8601_utc(epoch: f64) -> String {
    iso8601(epoch, 0).unwrap_or_else(|| "1970-01-01T00:00:00+00:00".to_owned())
}

/// Parse `YYYY-MM-DD[(T| )HH:MM[:SS[.f+]]][Z|±HH[:MM]]` into Unix seconds; a time without
/// an offset reads as UTC (spec 02 §2.4). `None` when it does not parse.
pub fn parse_iso8601(text: &str) -> Option<f64> {
    let text = text.trim();
    let bytes = text.as_bytes();
    let digits = |from: usize, len: usize| -> Option<i64> {
        let part = text.get(from..from + len)?;
        part.bytes().all(|b| b.is_ascii_digit()).then(|| part.parse().ok())?
    };
    let year = digits(0, 4)?;
    if bytes.get(4) != Some(&b'-') || bytes.get(7) != Some(&b'-') {
        return None;
    }
    let (month, day) = (u32::try_from(digits(5, 2)?).ok()?, u32::try_from(digits(8, 2)?).ok()?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut seconds = days_from_civil(year, month, day) as f64 * 86_400.0;
    let mut at = 10;
    if matches!(bytes.get(at), Some(b'T' | b' ')) {
        let hour = digits(at + 1, 2)?;
        if bytes.get(at + 3) != Some(&b':') {
            return None;
        }
        let minute = digits(at + 4, 2)?;
        at += 6;
        let mut second = 0.0;
        if bytes.get(at) == Some(&b':') {
            second = digits(at + 1, 2)? as f64;
            at += 3;
            if bytes.get(at) == Some(&b'.') {
                let end = text[at + 1..].find(|c: char| !c.is_ascii_digit()).map_or(text.len(), |i| at + 1 + i);
                let fraction: f64 = format!("0{}", &text[at..end]).parse().ok()?;
                second += fraction;
                at = end;
            }
        }
        if hour > 23 || minute > 59 || second >= 61.0 {
            return None;
        }
        seconds += (hour * 3600 + minute * 60) as f64 + second;
    }
    match text.get(at..)? {
        "" | "Z" | "z" => {}
        offset => {
            let sign = match offset.as_bytes().first()? {
                b'+' => 1.0,
                b'-' => -1.0,
                _ => return None,
            };
            let rest = offset.get(1..)?.replace(':', "");
            if rest.len() != 4 || !rest.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let hours: f64 = rest.get(..2)?.parse().ok()?;
            let minutes: f64 = rest.get(2..)?.parse().ok()?;
            seconds -= sign * (hours * 3600.0 + minutes * 60.0);
        }
    }
    Some(seconds)
}

#[cfg(test)]
mod tests;
