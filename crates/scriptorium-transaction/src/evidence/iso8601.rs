//! Normalize an evidence `observed_at` the way the reference does: Python's
//! `datetime.fromisoformat(value).isoformat()`.
//!
//! The normalized text is hashed into the source ids and written into the frame header,
//! so it must match the reference byte for byte on every input both accept. This is the
//! common subset of ISO 8601 that Python 3.11 reads:
//!
//! - date `YYYY-MM-DD` or `YYYYMMDD` (year 1 to 9999, a real calendar day);
//! - optionally `T`, `t` or a space, then time `HH[:MM[:SS[.f…]]]` or `HHMM[SS[.f…]]`
//!   (a fraction, with `.` or `,`, only after seconds; digits past six are dropped);
//! - optionally `Z` or an offset `±HH[:MM[:SS[.ffffff]]]` / `±HHMM[SS]`, under 24 hours.
//!
//! Output: `YYYY-MM-DDTHH:MM:SS`, then `.ffffff` if the microseconds are not zero, then
//! the offset as `+HH:MM` (with `:SS` and `.ffffff` only when not zero; `Z` is `+00:00`).
//!
//! Python also reads ISO week dates, any character as the date-time separator and a few
//! odd fraction placements; those are refused here (the caller gets `INVALID_ARGUMENT`
//! instead of a different id). Digits are ASCII only (decision Q5).

use std::fmt::Write as _;

/// The canonical form of `text`, or `None` when it is not an ISO 8601 date-time we read.
pub(crate) fn normalize(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let (date, rest) = date(bytes)?;
    let (time, offset) = match rest.split_first() {
        None => (Time::default(), None),
        Some((b'T' | b't' | b' ', time_text)) => {
            let zone_at = time_text.iter().position(|b| matches!(b, b'Z' | b'+' | b'-')).unwrap_or(time_text.len());
            let (clock, zone) = time_text.split_at(zone_at);
            let offset = if zone.is_empty() { None } else { Some(offset(zone)?) };
            (time(clock)?, offset)
        }
        Some(_) => return None,
    };
    let mut out = String::with_capacity(32);
    let Date { year, month, day } = date;
    // Writing into a String cannot fail; the results are ignored for that reason.
    let _ = write!(out, "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}", time.hour, time.minute, time.second);
    if time.micro != 0 {
        let _ = write!(out, ".{:06}", time.micro);
    }
    if let Some(offset) = offset {
        offset.render(&mut out);
    }
    Some(out)
}

/// A calendar date. Invariant: a real day of a year from 1 to 9999.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Date {
    year: u32,
    month: u32,
    day: u32,
}

/// `YYYY-MM-DD` or `YYYYMMDD` at the start of `bytes`; returns the date and the rest.
fn date(bytes: &[u8]) -> Option<(Date, &[u8])> {
    let (year, rest) = digits(bytes, 4)?;
    let (month, day, rest) = match rest.strip_prefix(b"-") {
        Some(extended) => {
            let (month, rest) = digits(extended, 2)?;
            let (day, rest) = digits(rest.strip_prefix(b"-")?, 2)?;
            (month, day, rest)
        }
        None => {
            let (month, rest) = digits(rest, 2)?;
            let (day, rest) = digits(rest, 2)?;
            (month, day, rest)
        }
    };
    let valid = year >= 1 && (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
    valid.then_some((Date { year, month, day }, rest))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Time {
    hour: u32,
    minute: u32,
    second: u32,
    micro: u32,
}

/// `HH[:MM[:SS[.f…]]]` or `HHMM[SS[.f…]]`, the whole of `bytes`.
fn time(bytes: &[u8]) -> Option<Time> {
    let (hour, mut rest) = digits(bytes, 2)?;
    let mut time = Time { hour, ..Time::default() };
    let extended = rest.first() == Some(&b':');
    let mut parts = 1;
    while !rest.is_empty() && parts < 3 {
        let after = if extended { rest.strip_prefix(b":")? } else { rest };
        let (value, next) = digits(after, 2)?;
        if parts == 1 {
            time.minute = value
        } else {
            time.second = value
        }
        rest = next;
        parts += 1;
    }
    if !rest.is_empty() {
        if parts < 3 {
            return None;
        }
        time.micro = fraction(rest)?;
    }
    (time.hour < 24 && time.minute < 60 && time.second < 60).then_some(time)
}

/// `.digits` or `,digits`, the whole of `bytes`: microseconds, digits past six dropped.
fn fraction(bytes: &[u8]) -> Option<u32> {
    let digits_text = bytes.strip_prefix(b".").or_else(|| bytes.strip_prefix(b","))?;
    if digits_text.is_empty() || !digits_text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut micro = 0;
    for place in 0..6 {
        let digit = digits_text.get(place).map_or(0, |d| u32::from(d - b'0'));
        micro = micro * 10 + digit;
    }
    Some(micro)
}

/// A UTC offset in seconds and microseconds, sign included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Offset {
    negative: bool,
    seconds: u32,
    micro: u32,
}

impl Offset {
    fn render(self, out: &mut String) {
        let zero = self.seconds == 0 && self.micro == 0;
        // Python prints a zero offset as `+00:00`, whatever sign it was written with.
        out.push(if self.negative && !zero { '-' } else { '+' });
        let (hours, minutes, seconds) = (self.seconds / 3600, self.seconds / 60 % 60, self.seconds % 60);
        let _ = write!(out, "{hours:02}:{minutes:02}");
        if seconds != 0 || self.micro != 0 {
            let _ = write!(out, ":{seconds:02}");
        }
        if self.micro != 0 {
            let _ = write!(out, ".{:06}", self.micro);
        }
    }
}

/// `Z` or `±HH[:MM[:SS[.ffffff]]]` / `±HH[MM[SS]]`, the whole of `bytes`.
fn offset(bytes: &[u8]) -> Option<Offset> {
    if bytes == b"Z" {
        return Some(Offset { negative: false, seconds: 0, micro: 0 });
    }
    let (sign, rest) = bytes.split_first()?;
    let negative = match sign {
        b'+' => false,
        b'-' => true,
        _ => return None,
    };
    let time = time(rest)?;
    Some(Offset { negative, seconds: time.hour * 3600 + time.minute * 60 + time.second, micro: time.micro })
}

/// Exactly `count` ASCII digits at the start of `bytes`, as a number, and the rest.
fn digits(bytes: &[u8], count: usize) -> Option<(u32, &[u8])> {
    let (head, rest) = bytes.split_at_checked(count)?;
    if !head.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = head.iter().fold(0, |acc, d| acc * 10 + u32::from(d - b'0'));
    Some((value, rest))
}
