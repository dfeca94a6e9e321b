//! Property tests: generated valid trees parse strictly, round-trip through render,
//! stay byte-stable under normalization once committed (CRLF becomes LF), and satisfy
//! the fuzz invariants (fresh normalization is idempotent). `PROPTEST_CASES` raises the
//! default 256 cases.

use proptest::prelude::*;
use scriptorium_topic_markdown::fuzz::{check_tree, fixture_sources};
use scriptorium_topic_markdown::{
    Baseline, Mode, NormalizeOptions, SourceResolver, TopicDocument, normalize, parse_tree,
};

use crate::generate::{lf, tree};

proptest! {
    #[test]
    fn generated_trees_round_trip(spec in tree()) {
        let files = spec.render();
        for (path, bytes) in &files {
            let document = TopicDocument::parse(path, bytes).expect("generated text is UTF-8");
            prop_assert_eq!(&TopicDocument::parse(path, &document.render()).expect("UTF-8"), &document);
            let lf_bytes = lf(&files).remove(path).unwrap_or_default();
            prop_assert_eq!(document.render(), lf_bytes);
        }
        let sources = SourceResolver::new(fixture_sources());
        let parsed = parse_tree(&files, &sources, Mode::Strict);
        prop_assert!(parsed.violations().is_empty(), "{:?}", parsed.violations());
        let blocks = parsed.units().iter().filter(|u| u.evidence.len() > 0).count();
        prop_assert_eq!(blocks, parsed.units().len());
        let baseline = Baseline::from_units(parsed.units().iter().cloned());
        let out = normalize(&files, &baseline, &sources, &NormalizeOptions::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        if spec.canonical {
            prop_assert_eq!(&out.files, &lf(&files));
        }
        let again = normalize(&out.files, &baseline, &sources, &NormalizeOptions::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&again.files, &out.files);
    }

    #[test]
    fn generated_trees_meet_the_fuzz_invariants(spec in tree()) {
        check_tree(&spec.render());
    }
}
