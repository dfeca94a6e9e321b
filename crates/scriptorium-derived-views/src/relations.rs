//! `relations.json`: outbound links of every unit and backlinks of every target
//! (spec 01 §8.3).

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};

use scriptorium_topic_markdown::Unit;

use crate::json::{string, string_list};

/// The file's bytes: one line, keys sorted, plus LF.
pub fn render_relations<U: Borrow<Unit>>(units: &[U]) -> String {
    let mut outbound: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut backlinks: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for unit in units.iter().map(Borrow::borrow) {
        let targets = outbound.entry(unit.memory_id.as_str()).or_default();
        for target in &unit.relation_targets {
            targets.insert(target.as_str());
            backlinks.entry(target.as_str()).or_default().insert(unit.memory_id.as_str());
        }
    }
    let members = |map: &BTreeMap<&str, BTreeSet<&str>>| -> Vec<String> {
        map.iter().map(|(key, values)| member(key, values.iter().copied())).collect()
    };
    let (backlinks, outbound) = (members(&backlinks), members(&outbound));
    document(backlinks.iter().map(String::as_str), outbound.iter().map(String::as_str))
}

/// One member of either object: `"key": ["value", ...]`, values in the order given.
pub(crate) fn member<'v>(key: &str, values: impl Iterator<Item = &'v str>) -> String {
    let values: Vec<&str> = values.collect();
    format!("{}: {}", string(key), string_list(&values))
}

/// The file from the rendered members of each object, in key order.
pub(crate) fn document<'m>(
    backlinks: impl Iterator<Item = &'m str>,
    outbound: impl Iterator<Item = &'m str>,
) -> String {
    let mut out = String::from("{\"backlinks\": {");
    join(&mut out, backlinks);
    out.push_str("}, \"outbound\": {");
    join(&mut out, outbound);
    out.push_str("}}\n");
    out
}

fn join<'m>(out: &mut String, members: impl Iterator<Item = &'m str>) {
    for (n, member) in members.enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        out.push_str(member);
    }
}
