//! `archive_write`: batches of records appended to archives on a real directory.

use super::{Case, Outcome};

pub(super) fn run(_case: &Case) -> Outcome {
    Outcome::Todo("archive-format writer")
}
