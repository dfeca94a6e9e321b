//! Rule adjustments added to the normalized BM25 score (spec 02 §6.3), for query tokens
//! of at least 3 characters: exact content hits `+min(0.18, 0.03·n)`, path or heading
//! hits `+min(0.15, 0.05·n)`, a `YYYY-MM-DD` of the query equal to the event's date
//! `+0.12`, and `+0.02` for an event with refs.
//!
//! The bonuses are added in that order from `0.0`, as the reference adds them, so the
//! sums are the same floats.

use scriptorium_archive_format::first_iso_date;

/// The shortest query token (in characters) the term rules consider.
pub(crate) const MIN_RULE_TOKEN_CHARS: usize = 3;
/// The bonus of an event that cites or is a source.
pub(crate) const SOURCE_GROUNDED: f64 = 0.02;

/// Which rules one event meets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RuleHits {
    /// Distinct long query tokens found in the content.
    pub(crate) exact_terms: usize,
    /// Distinct long query tokens found in the path or headings.
    pub(crate) path_heading_terms: usize,
    /// Whether a query date equals the event's date.
    pub(crate) date: bool,
    /// Whether the event has refs.
    pub(crate) grounded: bool,
}

impl RuleHits {
    /// The adjustment these hits earn.
    pub(crate) fn adjustment(self) -> f64 {
        let mut adjustment = 0.0;
        if self.exact_terms > 0 {
            adjustment += capped(0.03 * self.exact_terms as f64, 0.18);
        }
        if self.path_heading_terms > 0 {
            adjustment += capped(0.05 * self.path_heading_terms as f64, 0.15);
        }
        if self.date {
            adjustment += 0.12;
        }
        if self.grounded {
            adjustment += SOURCE_GROUNDED;
        }
        adjustment
    }
}

/// Python's `min(cap, value)`.
fn capped(value: f64, cap: f64) -> f64 {
    if value < cap { value } else { cap }
}

/// The names of the rules that fired, as the reference reports them: `exact_terms=` and
/// `path_heading=` with the sorted terms, `exact_date=` with the date, `source_grounded`.
///
/// The vectors never put a date in a query, so the `exact_date` spelling is this
/// project's choice; the other three are checked by the vectors.
pub(crate) fn rule_features(exact: &[&str], path_heading: &[&str], date: Option<&str>, grounded: bool) -> Vec<String> {
    let mut features = Vec::new();
    if !exact.is_empty() {
        features.push(format!("exact_terms={}", exact.join(",")));
    }
    if !path_heading.is_empty() {
        features.push(format!("path_heading={}", path_heading.join(",")));
    }
    if let Some(date) = date {
        features.push(format!("exact_date={date}"));
    }
    if grounded {
        features.push("source_grounded".to_owned());
    }
    features
}

/// Every `YYYY-MM-DD` in the query, left to right, non-overlapping.
pub(crate) fn query_dates(query: &str) -> Vec<&str> {
    let mut dates = Vec::new();
    let mut rest = query;
    while let Some(date) = first_iso_date(rest) {
        dates.push(date);
        // The first match is also the first occurrence of its own text.
        let end = rest.find(date).map_or(rest.len(), |at| at + date.len());
        rest = rest.get(end..).unwrap_or_default();
    }
    dates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjustments_match_the_vectors() {
        // berlin-mixed: exact 1, path 1, grounded → 0.1 after rounding.
        let hits = RuleHits { exact_terms: 1, path_heading_terms: 1, date: false, grounded: true };
        assert!((hits.adjustment() - 0.1).abs() < 1e-12);
        // Caps: at most 0.18 and 0.15.
        let many = RuleHits { exact_terms: 9, path_heading_terms: 9, date: true, grounded: false };
        assert!((many.adjustment() - (0.18 + 0.15 + 0.12)).abs() < 1e-12);
        assert_eq!(RuleHits::default().adjustment(), 0.0);
    }

    #[test]
    fn features_are_named_in_order() {
        let features = rule_features(&["dave", "garden"], &["cross"], Some("2024-01-02"), true);
        assert_eq!(
            features,
            ["exact_terms=dave,garden", "path_heading=cross", "exact_date=2024-01-02", "source_grounded"]
        );
    }

    #[test]
    fn finds_every_query_date() {
        assert_eq!(query_dates("from 2024-01-02 to 2024-02-03x"), ["2024-01-02", "2024-02-03"]);
        assert!(query_dates("2024-1-02").is_empty());
    }
}
