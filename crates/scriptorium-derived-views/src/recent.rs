//! `recent_events.jsonl`: the last units by creation order (spec 01 §8.2).

use std::borrow::Borrow;

use scriptorium_topic_markdown::Unit;

use crate::json::{string, string_list};

/// The default and fallback number of rows (`memory.recent.limit`).
pub const RECENT_LIMIT: usize = 50;

/// The row count for a `memory.recent.limit` config value: values outside 1–500 fall
/// back to [`RECENT_LIMIT`] (a programmatic 0 is set on [`crate::DerivedViews`] directly).
pub fn recent_limit_from_config(value: i64) -> usize {
    usize::try_from(value).ok().filter(|limit| (1..=500).contains(limit)).unwrap_or(RECENT_LIMIT)
}

/// The file's bytes: the last `limit` of `units` by `rank`, oldest first, one JSON
/// object a line. A stable sort keeps parse order between equal ranks.
pub fn render_recent<U: Borrow<Unit>>(units: &[U], rank: impl Fn(&str) -> i64, limit: usize) -> String {
    let mut ranked: Vec<(i64, &Unit)> =
        units.iter().map(Borrow::borrow).map(|unit| (rank(&unit.memory_id), unit)).collect();
    ranked.sort_by_key(|(order, _)| *order);
    let skip = ranked.len().saturating_sub(limit);
    let mut out = String::new();
    for (order, unit) in ranked.into_iter().skip(skip) {
        out.push_str(&recent_row(unit, order));
    }
    out
}

/// One line of the file: `unit` with its creation rank.
pub(crate) fn recent_row(unit: &Unit, order: i64) -> String {
    let when = unit.when.as_deref().map_or_else(|| "null".to_owned(), string);
    format!(
        "{{\"memory_id\": {}, \"when\": {when}, \"whens\": {}, \"content\": {}, \"refs\": {refs}, \"source_refs\": {refs}, \"topic_path\": {}, \"headings\": {}, \"created_order\": {order}}}\n",
        string(&unit.memory_id),
        string_list(&unit.whens()),
        string(&unit.content),
        string(&unit.path),
        string_list(&unit.headings),
        refs = string_list(&unit.source_refs),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_config_limits_fall_back() {
        assert_eq!(recent_limit_from_config(7), 7);
        assert_eq!(recent_limit_from_config(500), 500);
        assert_eq!(recent_limit_from_config(0), RECENT_LIMIT);
        assert_eq!(recent_limit_from_config(501), RECENT_LIMIT);
        assert_eq!(recent_limit_from_config(-3), RECENT_LIMIT);
    }
}
