//! Production token ids and counts equal tiktoken-rs `encode_ordinary`, the o200k_base
//! reference the crate used before bpe-openai, on random text built to reach every branch
//! of the pre-tokenizer: letter case runs and contractions, digits, punctuation with
//! trailing newlines or slashes, whitespace runs before words and at the end (the emulated
//! `\s+(?!\S)` look-ahead), CJK, emoji sequences, combining marks and special-token strings.

use proptest::prelude::*;
use scriptorium_derived_views::{count_o200k, o200k_ids};

/// Pieces the pre-tokenizer splits differently; random concatenations mix them.
const FRAGMENTS: &[&str] = &[
    "hello",
    "World",
    "HTTPServer",
    "McDonald",
    "ǅungla",
    "'s",
    "'LL",
    "'d",
    "don't",
    "I'M",
    "42",
    "1234567",
    "3.14159",
    "٣٤٥",
    "!",
    "...",
    "?!\n",
    "//",
    "/*",
    "</a>\r\n",
    "fn main() {}",
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|im_start|>",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    " \n ",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "\u{200b}",
    "预算超了",
    "百分之二十",
    "こんにちは",
    "カタカナ",
    "한국어",
    "Ελληνικά",
    "Кириллица",
    "हिन्दी",
    "العربية",
    "e\u{301}",
    "\u{301}",
    "🙂",
    "👩‍👩‍👧‍👦",
    "👍🏽",
    "🇫🇷",
    "\u{fffd}",
    "ß",
    "İ",
];

/// One fragment, a single random char, or a long run of one char.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(FRAGMENTS).prop_map(str::to_owned),
        2 => any::<char>().prop_map(String::from),
        1 => (prop::sample::select(&[' ', 'a', '\n', '7', '!', '中', '🙂', '\t'][..]), 1usize..600)
            .prop_map(|(c, n)| std::iter::repeat_n(c, n).collect()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(piece(), 0..40).prop_map(|pieces| pieces.concat()),
        1 => any::<String>(),
    ]
}

fn assert_same(text: &str) -> Result<(), TestCaseError> {
    let want = tiktoken_rs::o200k_base_singleton().encode_ordinary(text);
    prop_assert_eq!(&o200k_ids(text), &want, "ids of {:?}", text);
    prop_assert_eq!(count_o200k(text), want.len(), "count of {:?}", text);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn ids_and_counts_equal_tiktoken_encode_ordinary(text in text()) {
        assert_same(&text)?;
    }
}

/// Inputs no random draw is likely to hit: empty text, whitespace at the very end, and
/// runs long enough that tiktoken's merge loop and the backtracking encoder differ most.
#[test]
fn edge_inputs_equal_tiktoken_encode_ordinary() {
    let runs = ["a", " ", "\n", "\r\n", "1", "!", "中", "🙂", " a", "ab"].map(|unit| unit.repeat(5000));
    let edges = ["", " ", "\n", "x ", "x  ", "x \n", "x\t \t", "<|endoftext|>", "x <|endoftext|> y"];
    for text in runs.iter().map(String::as_str).chain(edges) {
        assert_same(text).unwrap_or_else(|error| panic!("{error}"));
    }
    assert_eq!(count_o200k("x <|endoftext|> y"), 9, "special-token text counts as plain text (decision Q3)");
}
