//! The legacy header rule and the lenient unquote.

use super::*;

#[test]
fn only_the_first_header_right_after_the_title_is_a_candidate() {
    let id = "openprogram/s 1/m0";
    let good = format!("# s 1\n\n<a id=\"{}\"></a>\n<!-- source-id:{id} -->\nbody\n", source_anchor(id));
    assert_eq!(legacy_candidate("s%201", &good), Some(("s 1".into(), "m0".into())));
    let forged_anchor = format!("# s 1\n\n<a id=\"source-0000000000000000\"></a>\n<!-- source-id:{id} -->\n");
    assert_eq!(legacy_candidate("s%201", &forged_anchor), None);
    let later = format!("# s 1\n\nintro\n<a id=\"{}\"></a>\n<!-- source-id:{id} -->\n", source_anchor(id));
    assert_eq!(legacy_candidate("s%201", &later), None);
    let other_thread = format!("# s 2\n\n<a id=\"{}\"></a>\n<!-- source-id:{id} -->\n", source_anchor(id));
    assert_eq!(legacy_candidate("s 2", &other_thread), None);
    assert_eq!(unquote("a%2Fb%zz%4"), "a/b%zz%4");
}
