//! Footnote definition lines: the canonical
//! ``[^FID]: Time: `WHEN`; Sources: [LABEL](TARGET), …`` form and the legacy
//! `[^FID]: WHEN · Sources: …` form (spec 01 §6.4).

use crate::syntax::{footnote_ref, links};
use crate::temporal::{EvidenceTime, date_shape_prefix};
use crate::text::{is_space, lazy_rest, strip};

/// Which of the two accepted shapes a definition line has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DefinitionForm {
    /// ``Time: `WHEN`; Sources: …`` (backticks optional when read).
    Canonical,
    /// `WHEN · Sources: …` (U+00B7), still read, rewritten by the normalizer.
    Legacy,
}

/// One Markdown link of a definition's sources part.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceLink {
    /// The label between the brackets, as written.
    pub label: String,
    /// The target between the parentheses, as written.
    pub target: String,
}

/// A parsed footnote definition line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Definition {
    /// The footnote id (`FID`).
    pub id: String,
    /// The evidence time.
    pub time: EvidenceTime,
    /// The line's shape.
    pub form: DefinitionForm,
    /// The whole sources part after `Sources:`, stripped.
    pub sources: String,
    /// The Markdown links found in the sources part; text outside them is ignored.
    pub links: Vec<SourceLink>,
}

impl Definition {
    /// The items the evidence-id seed is built from: the stripped link targets, or,
    /// for a link-less sources part, its items split on `,` and `·`.
    pub fn seed_items(&self) -> Vec<String> {
        if self.links.is_empty() {
            split_items(&self.sources).map(str::to_owned).collect()
        } else {
            self.links.iter().map(|link| strip(&link.target).to_owned()).collect()
        }
    }
}

/// Items of a link-less sources part: `re.split(r"\s*(?:,|·)\s*", …)`, empty items dropped.
pub(crate) fn split_items(sources: &str) -> impl Iterator<Item = &str> {
    sources.split([',', '·']).map(strip).filter(|item| !item.is_empty())
}

/// Parse one line as a definition, canonical form first. `None` when neither regex
/// matches (the line is then ordinary text).
pub fn parse_definition(line: &str) -> Option<Definition> {
    let (rest, id) = footnote_ref(line).ok()?;
    let rest = rest.strip_prefix(':')?;
    let rest = rest.trim_start_matches(is_space);
    let (time, form, sources) = match rest.strip_prefix("Time:") {
        Some(after) => {
            let (after, time) = when(after.trim_start_matches(is_space), true)?;
            let after = after.trim_start_matches(is_space).strip_prefix(';')?;
            let after = after.trim_start_matches(is_space).strip_prefix("Sources:")?;
            (time, DefinitionForm::Canonical, lazy_rest(after)?)
        }
        None => {
            let (after, time) = when(rest, false)?;
            let after = after.trim_start_matches(is_space).strip_prefix('·')?;
            let after = after.trim_start_matches(is_space).strip_prefix("Sources:")?;
            (time, DefinitionForm::Legacy, lazy_rest(after)?)
        }
    };
    let links = links(sources)
        .into_iter()
        .map(|link| SourceLink { label: link.label.to_owned(), target: link.target.to_owned() })
        .collect();
    Some(Definition { id: id.to_owned(), time: EvidenceTime::new(time), form, sources: sources.to_owned(), links })
}

/// `WHEN` (or `` `WHEN` `` when `backticks` may appear) at the start of `input`:
/// the rest of the input and the captured value.
fn when(input: &str, backticks: bool) -> Option<(&str, &str)> {
    let (rest, ticked) = match input.strip_prefix('`') {
        Some(after) if backticks => (after, true),
        _ => (input, false),
    };
    let (rest, value) = if let Some(after) = rest.strip_prefix(EvidenceTime::UNDATED) {
        (after, EvidenceTime::UNDATED)
    } else {
        let len = date_shape_prefix(rest)?;
        (rest.get(len..)?, rest.get(..len)?)
    };
    let rest = if ticked { rest.strip_prefix('`')? } else { rest };
    Some((rest, value))
}

/// Render a definition line canonically:
/// ``[^ID]: Time: `WHEN`; Sources: [LABEL](TARGET), [LABEL](TARGET)``.
pub fn render_definition(id: &str, time: &str, links: &[SourceLink]) -> String {
    let mut out = format!("[^{id}]: Time: `{time}`; Sources: ");
    for (n, link) in links.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        out.push('[');
        out.push_str(&link.label);
        out.push_str("](");
        out.push_str(&link.target);
        out.push(')');
    }
    out
}

#[cfg(test)]
mod tests;
