//! Python's `str.isspace` (what `\s` and `strip()` use on `str`): Rust's White_Space plus
//! the four information separators U+001C–U+001F, which Python counts as whitespace.
//! The views must split and strip exactly where the reference does to stay byte-exact.

/// Whether Python considers `c` whitespace.
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `text.rstrip()`.
pub(crate) fn rstrip(text: &str) -> &str {
    text.trim_end_matches(is_space)
}

#[cfg(test)]
mod tests {
    #[test]
    fn information_separators_are_space() {
        assert!(super::is_space('\u{1f}'));
        assert!(super::is_space('\u{3000}'));
        assert!(!super::is_space('x'));
        assert_eq!(super::rstrip("a \u{1c}\n"), "a");
    }
}
