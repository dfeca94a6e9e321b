//! `timeline/`: one file per evidence time, rebuilt whole on every install
//! (spec 01 §8.1).

use std::borrow::Borrow;
use std::collections::BTreeMap;

use scriptorium_topic_markdown::{PartialDate, Unit, UnitKind};

use crate::paths::{normpath, parent, relpath};
use crate::pyspace::rstrip;

/// One timeline entry before sorting.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) first_ref: String,
    pub(crate) memory_id: String,
    pub(crate) text: String,
}

/// The timeline entries of one unit: (timeline file path, entry), in evidence order.
pub(crate) type UnitEntries = Vec<(String, Entry)>;

/// Every timeline file: workspace-relative path (`timeline/2024/03/15.md`) → bytes.
pub fn render_timeline<U: Borrow<Unit>>(units: &[U]) -> BTreeMap<String, String> {
    let entries: Vec<UnitEntries> = units.iter().map(|unit| unit_entries(unit.borrow())).collect();
    assemble(entries.iter().flatten().map(|(path, entry)| (path.as_str(), entry)))
}

/// The entries `unit` contributes, which depend on nothing but the unit (so a cache can
/// keep them with the parsed file).
pub(crate) fn unit_entries(unit: &Unit) -> UnitEntries {
    let mut files = UnitEntries::new();
    let mut dated = false;
    for evidence in &unit.evidence {
        let Some(when) = evidence.when.as_deref().filter(|when| PartialDate::parse(when).is_some()) else {
            continue;
        };
        dated = true;
        let labels = if evidence.source_labels.len() == evidence.source_refs.len() {
            &evidence.source_labels
        } else {
            &evidence.source_refs
        };
        let sources: Vec<(&str, &str)> =
            labels.iter().zip(&evidence.source_links).map(|(l, t)| (l.as_str(), t.as_str())).collect();
        push(&mut files, unit, when, &evidence.quote, evidence.source_refs.first(), &sources);
    }
    // Legacy units carry their time on the unit, not on an annotation.
    if !dated
        && unit.kind == UnitKind::Legacy
        && let Some(when) = unit.when.as_deref().filter(|when| PartialDate::parse(when).is_some())
    {
        let sources: Vec<(&str, &str)> =
            unit.source_labels.iter().zip(&unit.source_links).map(|(l, t)| (l.as_str(), t.as_str())).collect();
        push(&mut files, unit, when, &unit.content, unit.source_refs.first(), &sources);
    }
    files
}

/// The timeline files from every entry in unit order: grouped by path, each group
/// stably sorted by (first source ref, memory id), joined as spec 01 §8.1 says.
pub(crate) fn assemble<'e>(entries: impl Iterator<Item = (&'e str, &'e Entry)>) -> BTreeMap<String, String> {
    let mut files: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    for (path, entry) in entries {
        files.entry(path).or_default().push(entry);
    }
    files
        .into_iter()
        .map(|(path, mut entries)| {
            entries.sort_by(|a, b| (&a.first_ref, &a.memory_id).cmp(&(&b.first_ref, &b.memory_id)));
            (path.to_owned(), render_file(path, entries.iter().map(|entry| entry.text.as_str())))
        })
        .collect()
}

/// One timeline file from its entry texts, already in order (spec 01 §8.1).
pub(crate) fn render_file<'t>(path: &str, texts: impl Iterator<Item = &'t str>) -> String {
    let when = path.trim_start_matches("timeline/").trim_end_matches(".md").replace('/', "-");
    let mut text = format!("# {when}\n");
    for entry in texts {
        text.push('\n');
        text.push_str(entry);
        text.push('\n');
    }
    let mut text = rstrip(&text).to_owned();
    text.push('\n');
    text
}

fn push(
    files: &mut UnitEntries,
    unit: &Unit,
    when: &str,
    quote: &str,
    first_ref: Option<&String>,
    sources: &[(&str, &str)],
) {
    let path = format!("timeline/{}.md", when.replace('-', "/"));
    let dir = parent(&path).to_owned();
    let frag = if unit.memory_id.starts_with("mem_") { unit.memory_id.clone() } else { format!("^{}", unit.memory_id) };
    let mut text = format!("{quote} [Topic]({}#{frag})", relpath(&unit.path, &dir));
    let topic_dir = parent(&unit.path);
    for (label, link) in sources {
        let (target, anchor) = link.split_once('#').map_or((*link, None), |(t, a)| (t, Some(a)));
        let resolved = normpath(&format!("{topic_dir}/{target}"));
        text.push_str(&format!(" [{label}]({}", relpath(&resolved, &dir)));
        if let Some(anchor) = anchor {
            text.push('#');
            text.push_str(anchor);
        }
        text.push(')');
    }
    files.push((
        path,
        Entry { first_ref: first_ref.cloned().unwrap_or_default(), memory_id: unit.memory_id.clone(), text },
    ));
}
