//! Workspace-relative `/` paths: Python `posixpath.normpath`, `relpath`, `dirname`,
//! the component-wise sort order (spec 01 §1.5), and link percent-coding.

use std::cmp::Ordering;

/// `posixpath.dirname`: everything before the last `/` (empty for a bare name).
pub(crate) fn dirname(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(head, _)| head)
}

/// `posixpath.basename`: everything after the last `/`.
pub(crate) fn basename(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, tail)| tail)
}

/// `posixpath.normpath` for the paths this crate meets: drops empty and `.`
/// components, folds `name/..`, keeps leading `..` of a relative path and drops them
/// for an absolute one. The empty result is `.`.
pub(crate) fn normpath(path: &str) -> String {
    normalize_parts(path.starts_with('/'), path.split('/'))
}

/// `normpath` of the components `parts` (of an absolute path when `absolute`).
fn normalize_parts<'a>(absolute: bool, parts: impl Iterator<Item = &'a str>) -> String {
    let mut kept: Vec<&str> = Vec::with_capacity(8);
    for part in parts {
        match part {
            "" | "." => {}
            ".." => match kept.last() {
                Some(&last) if last != ".." => {
                    kept.pop();
                }
                _ if absolute => {}
                _ => kept.push(".."),
            },
            other => kept.push(other),
        }
    }
    let mut out = String::with_capacity(kept.iter().map(|part| part.len() + 1).sum::<usize>() + 1);
    if absolute {
        out.push('/');
    }
    for (n, part) in kept.iter().enumerate() {
        if n > 0 {
            out.push('/');
        }
        out.push_str(part);
    }
    if out.is_empty() { ".".to_owned() } else { out }
}

/// `normpath(dir + "/" + relative)`, with an empty `dir` meaning the root.
pub(crate) fn join_normalized(dir: &str, relative: &str) -> String {
    if dir.is_empty() || relative.starts_with('/') {
        normpath(relative)
    } else {
        normalize_parts(dir.starts_with('/'), dir.split('/').chain(relative.split('/')))
    }
}

/// `posixpath.relpath(target, start)` for two normalized workspace-relative paths.
pub(crate) fn relpath(target: &str, start: &str) -> String {
    let target_parts: Vec<&str> = target.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    let start_parts: Vec<&str> = start.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    let common = target_parts.iter().zip(&start_parts).take_while(|(a, b)| a == b).count();
    let mut out = String::with_capacity(target.len() + 3 * start_parts.len());
    for _ in common..start_parts.len() {
        out.push_str("../");
    }
    for part in target_parts.iter().skip(common) {
        out.push_str(part);
        out.push('/');
    }
    out.pop();
    if out.is_empty() { ".".to_owned() } else { out }
}

/// Compare two paths component by component (so `a/z.md` sorts before `a.md`).
pub(crate) fn component_cmp(a: &str, b: &str) -> Ordering {
    a.split('/').cmp(b.split('/'))
}

/// `urllib.parse.unquote`: `%XX` sequences decoded as UTF-8, invalid bytes replaced;
/// anything that is not a valid escape stays as it is. One round only.
pub fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (b, hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(decoded)) if hex.is_some_and(|h| h.bytes().all(|c| c.is_ascii_hexdigit())) => {
                out.push(decoded);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `urllib.parse.quote(path, safe="/._-")`: bytes outside `[A-Za-z0-9/._~-]`
/// become `%XX` (uppercase; `~` is always safe in Python's `quote`).
pub(crate) fn quote_link_path(path: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Whether `path` is a plain workspace-relative topic path: `topics/…/name.md` with no
/// empty, `.` or `..` component.
pub(crate) fn is_topic_path(path: &str) -> bool {
    let mut parts = path.split('/');
    parts.next() == Some("topics")
        && path.ends_with(".md")
        && path.split('/').count() >= 2
        && path.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// A topic path relative to `topics/` (the reference's `topic_path`).
pub(crate) fn topic_relative(path: &str) -> &str {
    path.strip_prefix("topics/").unwrap_or(path)
}

#[cfg(test)]
mod tests;
