//! Python's `posixpath.normpath` / `relpath` on workspace-relative paths, and the link
//! re-targeting of spec 01 §7.1 step 1 and §7.3, which the byte-exact views depend on.

/// `posixpath.normpath` of a relative path: `.` and empty parts dropped, `..` folded
/// where it can be, leading `..` kept; `.` when nothing remains.
pub(crate) fn normpath(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|last| *last != "..") {
                    parts.pop();
                } else {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() { ".".to_owned() } else { parts.join("/") }
}

/// `posixpath.relpath(path, start)` for two workspace-relative paths.
pub(crate) fn relpath(path: &str, start: &str) -> String {
    let path = normpath(path);
    let start = normpath(start);
    let split =
        |p: &str| -> Vec<String> { if p == "." { Vec::new() } else { p.split('/').map(str::to_owned).collect() } };
    let path_parts = split(&path);
    let start_parts = split(&start);
    let common = path_parts.iter().zip(&start_parts).take_while(|(a, b)| a == b).count();
    let mut out: Vec<String> = vec!["..".to_owned(); start_parts.len().saturating_sub(common)];
    out.extend(path_parts.iter().skip(common).cloned());
    if out.is_empty() { ".".to_owned() } else { out.join("/") }
}

/// The directory part of a workspace-relative path (`""` for a top-level file).
pub(crate) fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |at| path.get(..at).unwrap_or(""))
}

/// Rewrite every link target matched by `(?<=\]\()([^)\s#]+)(?=[)#])` that is not a URL
/// or absolute path with `map`; the rest of `text` is kept byte for byte.
pub(crate) fn retarget_links(text: &str, map: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = text.get(search..).and_then(|rest| rest.find("](")) {
        let start = search + found + 2;
        let rest = text.get(start..).unwrap_or("");
        let len: usize = rest
            .chars()
            .take_while(|&c| c != ')' && c != '#' && !crate::pyspace::is_space(c))
            .map(char::len_utf8)
            .sum();
        let follows = rest.get(len..).and_then(|tail| tail.chars().next());
        if len > 0 && matches!(follows, Some(')' | '#')) {
            let target = rest.get(..len).unwrap_or("");
            out.push_str(text.get(copied..start).unwrap_or(""));
            if is_external(target) {
                out.push_str(target);
            } else {
                out.push_str(&map(target));
            }
            copied = start + len;
            search = copied;
        } else {
            // The `(` may itself start a `](` only if it were a `]`; step past this match.
            search = search + found + 1;
        }
    }
    out.push_str(text.get(copied..).unwrap_or(""));
    out
}

fn is_external(target: &str) -> bool {
    ["http://", "https://", "mailto:", "/"].iter().any(|prefix| target.starts_with(prefix))
}

/// §7.1: a link written in `topics/core.md`, as seen from the workspace root.
pub(crate) fn topics_to_root(target: &str) -> String {
    relpath(&normpath(&format!("topics/{target}")), ".")
}

/// §7.3: a link written in the root `core.md`, as seen from `topics/`.
pub(crate) fn root_to_topics(target: &str) -> String {
    relpath(&normpath(target), "topics")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normpath_and_relpath_follow_python() {
        assert_eq!(normpath("topics/../sources/x.md"), "sources/x.md");
        assert_eq!(normpath("a/./b//c/.."), "a/b");
        assert_eq!(normpath("../x"), "../x");
        assert_eq!(relpath("timeline/2024/03", "timeline/2024/03"), ".");
        assert_eq!(relpath("topics/core.md", "timeline/2024/03"), "../../../topics/core.md");
        assert_eq!(relpath("sources/x.md", "topics"), "../sources/x.md");
    }

    #[test]
    fn links_move_between_topics_and_root() {
        let text = "a [s](../sources/x.md#a) [t](people/dave.md#^id) [u](https://e.x) [v](/abs) [w](x y)";
        let moved = retarget_links(text, topics_to_root);
        assert_eq!(moved, "a [s](sources/x.md#a) [t](topics/people/dave.md#^id) [u](https://e.x) [v](/abs) [w](x y)");
        assert_eq!(retarget_links(&moved, root_to_topics), text);
    }
}
