//! Tokenizer parity with the reference's Python: the cases of spec 05 §A9 and the
//! properties of the frozen tables.

use super::*;

#[test]
fn devanagari_combining_marks_split_words() {
    // Python: re.findall(r"[^\W_]+", "हिन्दी") == ['ह', 'न', 'द'] (vowel signs and virama are Mc/Mn).
    assert_eq!(tokenize("हिन्दी"), ["ह", "न", "द"]);
}

#[test]
fn sharp_s_folds_to_ss() {
    assert_eq!(tokenize("Straße STRASSE"), ["strasse", "strasse"]);
    assert_eq!(casefold("ẞ"), "ss");
}

#[test]
fn folding_can_grow_a_token_and_keeps_combining_dot() {
    // İ folds to i + U+0307; the mark joins the run because the run is found before folding.
    assert_eq!(tokenize("İstanbul"), ["i\u{307}stanbul"]);
    assert_eq!(tokenize("ﬁne ﬂow"), ["fine", "flow"]);
    assert_eq!(tokenize("ΣΊΣΥΦΟΣ"), ["σίσυφοσ"]);
}

#[test]
fn cjk_runs_add_characters_then_bigrams() {
    assert_eq!(tokenize("成本"), ["成本", "成", "本", "成本"]);
    assert_eq!(tokenize("家庭群聊"), ["家庭群聊", "家", "庭", "群", "聊", "家庭", "庭群", "群聊"]);
    // One CJK character alone, or a run mixed with Latin letters, gets no extra tokens.
    assert_eq!(tokenize("京 京a"), ["京", "京a"]);
    // Kana and Hangul count; the prolonged sound mark is Katakana too.
    assert_eq!(tokenize("ラーメン"), ["ラーメン", "ラ", "ー", "メ", "ン", "ラー", "ーメ", "メン"]);
    assert_eq!(tokenize("한국"), ["한국", "한", "국", "한국"]);
}

#[test]
fn underscore_and_punctuation_separate_words() {
    assert_eq!(tokenize("snake_case_word"), ["snake", "case", "word"]);
    assert_eq!(tokenize("2024-03-15 D18:11"), ["2024", "03", "15", "d18", "11"]);
    assert!(tokenize("!!! ???").is_empty());
    assert!(tokenize("").is_empty());
}

#[test]
fn numbers_of_every_kind_are_word_characters() {
    assert_eq!(tokenize("x² ½ Ⅻ"), ["x²", "½", "ⅻ"]);
    assert_eq!(tokenize("ＡＢＣ１２３"), ["ａｂｃ１２３"]);
}

#[test]
fn tables_are_sorted_disjoint_and_from_unicode_14() {
    assert_eq!(TOKENIZER_UNICODE_VERSION, "14.0.0");
    for pair in tables::WORD_RANGES.windows(2) {
        let [(a_low, a_high), (b_low, _)] = pair else { unreachable!() };
        assert!(a_low <= a_high && a_high + 1 < *b_low, "{pair:?}");
    }
    for pair in tables::CASE_FOLDS.windows(2) {
        let [(a, _), (b, _)] = pair else { unreachable!() };
        assert!(a < b);
    }
    // Unicode 14 facts: U+0870 (Arabic, new in 14.0) is a letter; U+1E030 (new in 15.0) is not yet.
    assert!(is_word_char('\u{870}'));
    assert!(!is_word_char('\u{1e030}'));
    assert!(!is_word_char('_'));
    assert!(!is_word_char('\u{94d}'));
}

#[test]
fn ascii_fast_path_agrees_with_the_tables() {
    for c in (0u8..128).map(char::from) {
        let from_table = in_ranges(tables::WORD_RANGES, u32::from(c));
        assert_eq!(is_word_char(c), from_table, "{c:?}");
        let mut folded = String::new();
        push_casefold(&mut folded, c);
        let table = tables::CASE_FOLDS.iter().find(|(cp, _)| *cp == u32::from(c)).map(|(_, to)| *to);
        assert_eq!(folded, table.map_or_else(|| c.to_string(), str::to_owned), "{c:?}");
    }
}

#[test]
fn fast_paths_agree_with_the_tables() {
    for cp in (0x3400..=0x4dbf).chain(0x4e00..=0x9fff).chain(0xac00..=0xd7a3) {
        assert!(in_ranges(tables::WORD_RANGES, cp), "U+{cp:04X} is in a fast word range but not in the table");
    }
    for &(from, _) in tables::CASE_FOLDS {
        assert!(!FOLD_FREE.iter().any(|&(low, high)| (low..=high).contains(&from)), "U+{from:04X} folds");
    }
}

/// The tokenizer before its verbatim-run shortcut: every word character folded into a
/// buffer, one at a time.
fn tokens_by_folding_every_character(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let (mut folded, mut chars, mut all_cjk) = (String::new(), 0usize, true);
    for c in text.chars().chain(['.']) {
        if is_word_char(c) {
            if chars == 0 {
                folded.clear();
                all_cjk = true;
            }
            push_casefold(&mut folded, c);
            chars += 1;
            all_cjk &= is_cjk(c);
        } else if chars > 0 {
            finish_run(&folded, chars, all_cjk, &mut |token: &str| tokens.push(token.to_owned()));
            chars = 0;
        }
    }
    tokens
}

proptest::proptest! {
    #[test]
    fn verbatim_runs_tokenize_as_folding_every_character(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "abc", "x1", "Ab", "ZZ", "ß", "İ", "京都", "市", "ラー", "한", "_", " ", "-", "9", "ﬁ", "é", "e\u{301}", "ह\u{93f}",
            ]),
            0..12,
        )
    ) {
        let text: String = parts.concat();
        proptest::prop_assert_eq!(tokenize(&text), tokens_by_folding_every_character(&text));
    }
}

#[test]
fn verbatim_and_folded_runs_mix() {
    assert_eq!(tokenize("abc Abc aBC abcß 京a a京 x"), ["abc", "abc", "abc", "abcss", "京a", "a京", "x"]);
    assert_eq!(tokenize("end9"), ["end9"]);
    assert_eq!(tokenize("京都"), ["京都", "京", "都", "京都"]);
}
