//! The Python-syntax reading: what is refused, and that what is accepted keeps Python's
//! meaning (each expectation is what CPython 3.11's `re.search` answers).

use super::*;

fn regex(pattern: &str) -> Regex {
    compile(pattern, true).unwrap_or_else(|e| panic!("{pattern:?} should compile: {e}"))
}

fn matches(pattern: &str, line: &str) -> bool {
    regex(pattern).is_match(line)
}

fn refused(pattern: &str) -> Error {
    match compile(pattern, false) {
        Ok(regex) => panic!("{pattern:?} should be refused, compiled as {regex:?}"),
        Err(error) => error,
    }
}

#[test]
fn constructs_without_a_linear_time_search_are_refused() {
    for pattern in [
        "foo(?=bar)",
        "foo(?!bar)",
        "(?<=foo)bar",
        "(?<!foo)bar",
        r"(a)\1",
        r"(a)b\2",
        "(?P<x>a)(?P=x)",
        "a*+",
        "a++",
        "a?+",
        "a{2}+",
        "a{1,3}+",
        "(?>ab|a)c",
        "(a)?(?(1)b|c)",
    ] {
        let error = refused(pattern);
        assert_eq!(error.code(), ErrorCode::InvalidPattern, "{pattern:?}");
        assert_eq!(error.code().contract_code(), Some("INVALID_ARGUMENT"));
    }
}

#[test]
fn constructs_read_differently_are_refused() {
    for pattern in [
        "(?x) a b",
        "(?a)\\w",
        "(?L)a",
        "(?U)a+",
        "(?R)a",
        "(?-u)a",
        "a(?i)b",
        "(?:a)(?i)b",
        "x|(?i)y",
        "((?i)a)",
        "(?<name>a)",
        r"\N{EM DASH}",
    ] {
        assert_eq!(refused(pattern).code(), ErrorCode::InvalidPattern, "{pattern:?}");
    }
}

#[test]
fn what_python_refuses_is_refused() {
    for pattern in [
        r"\z",
        r"\p{L}",
        r"\pL",
        r"\G",
        r"\e",
        r"\8",
        r"[\8]",
        r"[\A]",
        "a\\",
        r"\x4",
        r"\u12",
        r"\U00110000",
        r"\ud800",
        r"\777",
        "*a",
        "(*a)",
        "a|*b",
        "^*",
        "{1}",
        "^{1}",
        "a**",
        "a*?*",
        "a{2}{3}",
        "(a",
        "a)",
        "[a",
        "[a-",
        r"[\w-z]",
        "[z-a]",
        "a{3,2}",
        "(?P<1a>x)",
        "(?P<>x)",
        "(?Px)",
        "(?#unclosed",
        "(?",
        "(?i",
        "(?i-)",
        "(?-i)",
        "(?q)",
    ] {
        assert_eq!(refused(pattern).code(), ErrorCode::InvalidPattern, "{pattern:?}");
    }
}

#[test]
fn hostile_patterns_hit_the_size_limit() {
    for pattern in [r"(\w{500}){500}", r"\w{1000}", "(a{1000}){1000}", "(((a{100}){100}){100})"] {
        assert_eq!(refused(pattern).code(), ErrorCode::InvalidPattern, "{pattern:?}");
    }
    // A long but reasonable pattern still compiles.
    assert!(matches(&"ab".repeat(2000), &"ab".repeat(2000)));
    assert!(matches(r"\w{30}", &"x".repeat(30)));
    assert!(matches(r"\w+ \w{20,}", &format!("a {}", "y".repeat(40))));
}

#[test]
fn punctuation_inside_a_class_is_literal_as_in_python() {
    // Python has no nested classes or set operators: `[[a]` is the class `[`, `a`.
    assert!(matches("^[[a]$", "["));
    assert!(matches("^[[a]$", "a"));
    // `[a[b]]` is the class `a`, `[`, `b` followed by a literal `]`.
    assert!(matches("^[a[b]]$", "b]"));
    assert!(!matches("^[a[b]]$", "b"));
    assert!(matches("^[[:alpha:]]$", ":]"));
    assert!(!matches("^[[:alpha:]]$", "x"));
    assert!(matches("^[a&&b]$", "&"));
    assert!(matches("^[a~~b]$", "~"));
    assert!(matches("^[+--]$", ","), "a range from `+` to `-`");
    assert!(matches("^[a-]$", "-"));
    assert!(matches("^[-a]$", "-"));
    assert!(matches("^[]a]$", "]"));
    assert!(matches("^[^]a]$", "b"));
    assert!(!matches("^[^]a]$", "]"));
    assert!(matches(r"^[\]]$", "]"));
    assert!(matches(r"^[\b]$", "\u{8}"), "`\\b` in a class is a backspace");
    assert!(matches(r"^[\d.]+$", "3.14"));
    assert!(!matches(r"^[\d.]+$", "3,14"));
}

#[test]
fn braces_escapes_and_anchors_keep_python_meaning() {
    assert!(matches("^a{$", "a{"));
    assert!(matches("^a{x}$", "a{x}"));
    assert!(matches("^x{}$", "x{}"));
    assert!(matches("^a{x,1}$", "a{x,1}"));
    assert!(matches("^a{,2}b$", "b"));
    assert!(matches("^a{,2}b$", "aab"));
    assert!(!matches("^a{,2}b$", "aaab"));
    assert!(matches("^a{2,}$", "aaaa"));
    assert!(matches("^a{,}$", "aaa"));
    assert!(matches("^a{2}?$", "aa"));
    assert!(matches("^a}$", "a}"));
    assert!(matches("^a]$", "a]"));
    assert!(matches(r"^\<b\>$", "<b>"), "`\\<` is a literal, not a word start");
    assert!(matches(r"abc\Z", "xabc"));
    assert!(!matches(r"abc\Z", "abcx"));
    assert!(matches(r"\Aab", "abc"));
    assert!(!matches(r"\Aab", "cab"));
    assert!(matches(r"^\x41\u00e9\U0001F600$", "Aé😀"));
    assert!(matches(r"^\101$", "A"), "three octal digits");
    assert!(matches(r"^\0$", "\0"));
    assert!(matches(r"^[\101-\103]+$", "ABC"));
    assert!(matches(r"^\t\.\*\+\?\(\)\|\$\^\\$", "\t.*+?()|$^\\"));
    assert!(matches(r"^\é\#\ $", "é# "));
    assert!(matches("^a(?#a comment)b$", "ab"));
    assert!(matches("^a(?#c)*$", "aaa"), "a comment leaves the repeated atom in place");
    assert!(matches("(?i)(?s)^a.b$", "A\nb"));
    assert!(matches("^(?P<word>\\w+) (?:x|y)$", "hello y"));
    assert!(matches("^a # b$", "a # b"), "without `x`, `#` and spaces are literal");
}

#[test]
fn unicode_classes_and_word_boundaries() {
    assert!(matches(r"^\d+$", "٣٤"), "Arabic-Indic digits are decimal digits");
    assert!(matches(r"^\w+$", "Zürich東京"));
    assert!(matches(r"\bcat\b", "a cat."));
    assert!(!matches(r"\bcat\b", "concatenate"));
    assert!(matches(r"^\s$", "\u{3000}"), "ideographic space");
    assert!(matches(r"^\S+$", "東京"));
}

#[test]
fn case_folding_is_simple_folding() {
    let insensitive = |pattern: &str, line: &str| compile(pattern, false).expect("compiles").is_match(line);
    assert!(insensitive("crème brûlée", "CRÈME BRÛLÉE"));
    assert!(insensitive("σίσυφος", "ΣΊΣΥΦΟΣ"));
    assert!(insensitive("ΣΊΣΥΦΟΣ", "σίσυφος"), "final sigma folds to sigma");
    assert!(insensitive("kelvin", "\u{212a}elvin"), "the Kelvin sign folds to k");
    assert!(insensitive("東京タワー", "東京タワー"));
    assert!(insensitive("ｔｏｋｙｏ", "ＴＯＫＹＯ"), "fullwidth Latin has case");
    // Simple folding: `ß` and `ẞ` are one letter, but `ß` is not `ss`.
    assert!(insensitive("straße", "STRAẞE"));
    assert!(!insensitive("straße", "STRASSE"));
    // Scoped flags still work inside a case-insensitive pattern.
    assert!(insensitive("(?-i:a)B", "ab"));
    assert!(!insensitive("(?-i:a)B", "Ab"));
    assert!(!matches("abc", "ABC"));
    assert!(matches("(?i)abc", "ABC"));
    assert!(matches("(?i:a)b", "Ab"));
    assert!(!matches("(?i:a)b", "AB"));
}
