//! `memory_get` (spec 02 §7): one visible file, one block of it, one heading's section,
//! or its first 400 lines; a source archive shows its record lines only, and the text
//! is sanitized so no fence leaves injection.

pub(crate) mod path;

use scriptorium_archive_format::{is_v2_source_path, parse_bytes};
use scriptorium_topic_markdown::{ItemKind, TopicDocument, split_lines};
use serde_json::Value;

use super::output::{Args, cap_chars, invalid, tx_error};
use super::{Caller, ToolSpec, notice};
use crate::fence::sanitize_context;
use crate::local::Host;
use crate::tier::Capability;

pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "memory_get",
    description: "Read one memory file by its workspace-relative path (as memory_browse, memory_search or memory_grep \
show it). With block_id, only that block (the paragraph ending in ^<block_id>) and the footnotes it cites; with \
heading, only that heading's section; otherwise the first 400 lines. Give at most one of block_id and heading.",
    input_schema: r#"{"type":"object","properties":{"path":{"type":"string","description":"The file's workspace-relative path, for example topics/people/dave.md."},"heading":{"type":"string","description":"Only the section under the first heading with this text (case-insensitive), up to the next heading of the same or a higher level."},"block_id":{"type":"string","description":"Only the block with this id, without the ^ (for example f888f60e from a #^f888f60e anchor), with the footnotes it cites."}},"required":["path"]}"#,
    max_chars: 30000,
    capability: Capability::MemoryRead,
};

/// Lines shown when no block or heading is asked for.
const DEFAULT_LINES: usize = 400;

/// The cap of the text itself, inside the tool's output cap.
const INNER_MAX_CHARS: usize = 40_000;

pub(super) fn run(host: &Host<'_>, arguments: &Value, _caller: &Caller) -> String {
    read(host.root, arguments).unwrap_or_else(|error| tx_error(&error))
}

/// The tool's answer for the workspace at `root`, without a warm backend (the CLI's `show`).
pub(crate) fn read(root: &std::path::Path, arguments: &Value) -> Result<String, crate::Error> {
    let args = Args::new(arguments)?;
    let Some(raw) = args.text("path")? else {
        return Ok(notice(
            "memory_get needs a path, for example topics/people/dave.md: call memory_browse to list the files.",
        ));
    };
    let heading = args.text("heading")?;
    let block_id = args.text("block_id")?.map(|id| id.trim_start_matches('^'));
    if heading.is_some() && block_id.is_some() {
        return Err(invalid("give at most one of heading and block_id").with_path(raw));
    }
    let relative = path::relative(raw)?;
    let file = path::on_disk(root, &relative, raw)?;
    let bytes = std::fs::read(&file).map_err(|error| {
        crate::Error::new(crate::ErrorCode::Io, format!("cannot read {relative}: {error}")).with_path(raw)
    })?;
    let text = readable_text(&relative, &bytes);
    let body = match (block_id, heading) {
        (Some(id), _) => block(&relative, &text, id).ok_or_else(|| {
            invalid(format!("no block ^{id} in {relative}: memory_search and memory_grep show block ids"))
                .with_path(raw)
        })?,
        (None, Some(heading)) => section(&relative, &text, heading)
            .ok_or_else(|| invalid(format!("no heading {heading:?} in {relative}")).with_path(raw))?,
        (None, None) => first_lines(&text),
    };
    let body = sanitize_context(&body);
    if body.trim().is_empty() {
        return Ok("(empty)".to_owned());
    }
    Ok(cap_chars(body, INNER_MAX_CHARS))
}

/// The text of a file as a reader may see it: a v2 archive's record lines only (no
/// anchors, ids or metadata, and no torn tail), any other file as text.
fn readable_text(relative: &str, bytes: &[u8]) -> String {
    if relative.starts_with("sources/") && is_v2_source_path(relative) {
        let parsed = parse_bytes(bytes, relative);
        return parsed.frames.iter().map(|frame| frame.record_text).collect::<Vec<_>>().join("\n\n");
    }
    String::from_utf8_lossy(bytes).into_owned()
}

/// The first 400 lines, with a hint when there are more.
fn first_lines(text: &str) -> String {
    let lines = split_lines(text);
    let mut out = lines.iter().take(DEFAULT_LINES).copied().collect::<Vec<_>>().join("\n");
    if lines.len() > DEFAULT_LINES {
        out.push_str(&format!(
            "\n… lines 1-{DEFAULT_LINES} of {} shown: pass heading or block_id to read a part further down.",
            lines.len()
        ));
    }
    out
}

/// The paragraph whose block-id run holds `id`, then every definition line of the file
/// that it cites.
fn block(relative: &str, text: &str, id: &str) -> Option<String> {
    let document = TopicDocument::from_text(relative, text);
    let lines = document.lines();
    let (item, paragraph) = document.paragraphs().find(|(_, paragraph)| paragraph.ids.iter().any(|own| own == id))?;
    let mut out: Vec<&str> = lines.get(item.start..item.end)?.iter().map(String::as_str).collect();
    let cited: Vec<&str> = paragraph.cited().collect();
    let definitions: Vec<&str> = document
        .definitions()
        .filter(|(_, definition)| cited.contains(&definition.id.as_str()))
        .filter_map(|(item, _)| lines.get(item.start).map(String::as_str))
        .collect();
    if !definitions.is_empty() {
        out.push("");
        out.extend(definitions);
    }
    Some(out.join("\n"))
}

/// From the first heading whose text equals `wanted` (case-insensitive; leading `#`s in
/// `wanted` ignored) to the next heading of the same or a higher level.
fn section(relative: &str, text: &str, wanted: &str) -> Option<String> {
    let wanted = wanted.trim_start_matches('#').trim().to_lowercase();
    let document = TopicDocument::from_text(relative, text);
    let headings: Vec<(usize, usize, &str)> = document
        .items()
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Heading { level, text } => Some((item.start, *level, text.as_str())),
            _ => None,
        })
        .collect();
    let at = headings.iter().position(|(_, _, text)| text.trim().to_lowercase() == wanted)?;
    let (start, level, _) = *headings.get(at)?;
    let end = headings
        .iter()
        .skip(at + 1)
        .find(|(_, other, _)| *other <= level)
        .map_or(document.lines().len(), |(line, _, _)| *line);
    let lines = document.lines().get(start..end)?;
    Some(lines.join("\n").trim_end().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOPIC: &str = "# Dave\n\nIntro line.[^e-1] ^aaaa1111\n\n## Work\n\nDave reviews code.[^e-2] ^old00000 ^bbbb2222\n\n### Detail\n\nDeep.[^e-2] ^cccc3333\n\n## Home\n\nLives in Berlin.[^e-1] ^dddd4444\n\n[^e-1]: Time: `2024-01-02`; Sources: [a](a)\n[^e-2]: Time: `2024-01-03`; Sources: [b](b)\n";

    #[test]
    fn a_block_comes_with_the_definitions_it_cites_and_aliases_find_it() {
        let got = block("topics/dave.md", TOPIC, "bbbb2222").expect("found");
        assert_eq!(got, "Dave reviews code.[^e-2] ^old00000 ^bbbb2222\n\n[^e-2]: Time: `2024-01-03`; Sources: [b](b)");
        assert_eq!(block("topics/dave.md", TOPIC, "old00000"), Some(got));
        assert_eq!(block("topics/dave.md", TOPIC, "ffff0000"), None);
    }

    #[test]
    fn a_section_runs_to_the_next_heading_of_its_level_or_higher() {
        let work = section("topics/dave.md", TOPIC, "work").expect("found");
        assert!(work.starts_with("## Work\n") && work.contains("### Detail") && !work.contains("Home"), "{work}");
        assert_eq!(section("topics/dave.md", TOPIC, "## HOME").map(|s| s.contains("Berlin")), Some(true));
        assert_eq!(section("topics/dave.md", TOPIC, "Nowhere"), None);
    }

    #[test]
    fn long_files_show_400_lines_and_say_so() {
        let text: String = (1..=450).map(|n| format!("line {n}\n")).collect();
        let shown = first_lines(&text);
        assert!(shown.contains("line 400\n… lines 1-400 of 450"), "{}", &shown[shown.len() - 120..]);
        assert!(!shown.contains("line 401"));
        assert_eq!(first_lines("a\nb\n"), "a\nb");
    }
}
