//! Evidence times (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `undated`) and the half-open
//! calendar intervals that date windows compare them with.
//!
//! Digits are ASCII only (decision Q5). A partial date is valid when it names a real
//! calendar day once a missing month or day is read as 1, as the reference checks it.

use crate::error::{ErrorCode, Violation};

/// A calendar day as `(year, month, day)`; ordering is chronological.
type Day = (u32, u32, u32);

/// A validated `YYYY`, `YYYY-MM` or `YYYY-MM-DD` date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PartialDate {
    year: u32,
    month: Option<u32>,
    day: Option<u32>,
}

impl PartialDate {
    /// Parse a whole string as `YYYY`, `YYYY-MM` or `YYYY-MM-DD` naming a real date
    /// (year 1 to 9999, as Python's `date` accepts).
    pub fn parse(text: &str) -> Option<Self> {
        let (year, month, day) = split_shape(text)?;
        let date = PartialDate { year, month, day };
        let (y, m, d) = date.first_day();
        let valid = (1..=9999).contains(&y) && (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m);
        valid.then_some(date)
    }

    /// The half-open calendar interval this date covers, as `YYYY-MM-DD` strings: its
    /// first day and the day after its last (the temporal bounds of a date window).
    pub fn bounds(self) -> (String, String) {
        let day = |(y, m, d): Day| format!("{y:04}-{m:02}-{d:02}");
        (day(self.first_day()), day(self.end_day()))
    }

    /// The first day this date covers.
    fn first_day(self) -> Day {
        (self.year, self.month.unwrap_or(1), self.day.unwrap_or(1))
    }

    /// The day after the last day this date covers (the interval's exclusive end).
    fn end_day(self) -> Day {
        match (self.month, self.day) {
            (Some(m), Some(d)) => next_day((self.year, m, d)),
            (Some(12), None) => (self.year + 1, 1, 1),
            (Some(m), None) => (self.year, m + 1, 1),
            (None, _) => (self.year + 1, 1, 1),
        }
    }
}

/// The length of the longest prefix of `text` shaped like a date, if any.
pub(crate) fn date_shape_prefix(text: &str) -> Option<usize> {
    let digits = |s: &str, n: usize| s.len() >= n && s.bytes().take(n).all(|b| b.is_ascii_digit());
    if !digits(text, 4) {
        return None;
    }
    let mut len = 4;
    for _ in 0..2 {
        match text.get(len..) {
            Some(rest) if rest.starts_with('-') && digits(rest.get(1..).unwrap_or_default(), 2) => len += 3,
            _ => break,
        }
    }
    Some(len)
}

fn split_shape(text: &str) -> Option<(u32, Option<u32>, Option<u32>)> {
    if date_shape_prefix(text)? != text.len() {
        return None;
    }
    let number = |range: std::ops::Range<usize>| text.get(range).and_then(|s| s.parse::<u32>().ok());
    let year = number(0..4)?;
    let month = if text.len() >= 7 { Some(number(5..7)?) } else { None };
    let day = if text.len() == 10 { Some(number(8..10)?) } else { None };
    Some((year, month, day))
}

fn is_leap(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

fn next_day((y, m, d): Day) -> Day {
    if d < days_in_month(y, m) {
        (y, m, d + 1)
    } else if m < 12 {
        (y, m + 1, 1)
    } else {
        (y + 1, 1, 1)
    }
}

/// The time of one piece of evidence: `undated` or a (possibly partial) date, kept
/// exactly as written so an invalid date can still be reported and indexed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EvidenceTime {
    raw: String,
}

impl EvidenceTime {
    /// The literal `undated`.
    pub const UNDATED: &'static str = "undated";

    /// Wrap the captured `WHEN` text (without backticks).
    pub fn new(raw: impl Into<String>) -> Self {
        EvidenceTime { raw: raw.into() }
    }

    /// The text as written (`undated`, `2024`, `2024-03`, `2024-03-15`, or an invalid
    /// date such as `2024-02-30`).
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// Whether this is `undated`.
    pub fn is_undated(&self) -> bool {
        self.raw == Self::UNDATED
    }

    /// The date, unless undated or not a real calendar date.
    pub fn date(&self) -> Option<PartialDate> {
        PartialDate::parse(&self.raw)
    }

    /// Whether the time is `undated` or a real calendar date.
    pub fn is_valid(&self) -> bool {
        self.is_undated() || self.date().is_some()
    }

    /// The time as a unit's `when`: `None` when undated.
    pub fn when(&self) -> Option<&str> {
        (!self.is_undated()).then_some(self.raw.as_str())
    }
}

/// A `date_from` / `date_to` window over event dates, each bound expanded to its
/// whole calendar interval (`from` = start of its interval, `to` = end of its interval).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeWindow {
    from: Option<Day>,
    to: Option<Day>,
}

impl TimeWindow {
    /// Build a window; either bound may be absent.
    ///
    /// Errors: [`ErrorCode::InvalidWindowDate`] for a bound that is not a real date,
    /// [`ErrorCode::EmptyDateWindow`] when `from` is not before `to`.
    pub fn new(from: Option<&str>, to: Option<&str>) -> Result<Self, Violation> {
        let bound = |name: &str, value: Option<&str>| match value {
            None => Ok(None),
            Some(text) => PartialDate::parse(text).map(Some).ok_or_else(|| {
                Violation::new(ErrorCode::InvalidWindowDate, "", None, format!("invalid {name}: {text}"))
            }),
        };
        let from = bound("date_from", from)?.map(PartialDate::first_day);
        let to = bound("date_to", to)?.map(PartialDate::end_day);
        if let (Some(f), Some(t)) = (from, to)
            && f >= t
        {
            return Err(Violation::new(ErrorCode::EmptyDateWindow, "", None, "date_from must not be after date_to"));
        }
        Ok(TimeWindow { from, to })
    }

    /// Whether the window has no bound at all.
    pub fn is_unbounded(&self) -> bool {
        self.from.is_none() && self.to.is_none()
    }

    /// Whether any of `dates` (event dates; invalid ones ignored) overlaps the window.
    /// An unbounded window matches everything; a bounded one never matches an event
    /// without a valid date.
    pub fn matches<'a>(&self, dates: impl IntoIterator<Item = &'a str>) -> bool {
        if self.is_unbounded() {
            return true;
        }
        dates.into_iter().filter_map(PartialDate::parse).any(|date| {
            let (start, end) = (date.first_day(), date.end_day());
            self.to.is_none_or(|to| start < to) && self.from.is_none_or(|from| end > from)
        })
    }
}

#[cfg(test)]
mod tests;
