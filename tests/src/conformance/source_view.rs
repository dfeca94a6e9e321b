//! The retrieval view of source archives: BM25 events, the trusted-id set, and the
//! legacy speaker hint.

use super::{Case, Outcome};

pub(super) fn check_source_view(_case: &Case, _relative_path: &str, _bytes: &[u8]) -> Result<(), String> {
    Ok(())
}

pub(super) fn run_legacy(_case: &Case) -> Outcome {
    Outcome::Todo("archive-format source view")
}

pub(super) fn run_legacy_speaker(_case: &Case) -> Outcome {
    Outcome::Todo("archive-format source view")
}
