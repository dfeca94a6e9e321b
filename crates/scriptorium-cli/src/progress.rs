//! Progress on long work (the cold index build, backfill, export): indicatif bars drawn on
//! stderr only when stderr is a terminal, so piped or captured output never holds a
//! carriage return or an escape sequence.

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often a spinner redraws itself while the work gives no news.
const TICK: Duration = Duration::from_millis(120);

/// stderr when it is a terminal, else nothing at all.
fn target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() }
}

/// A spinner with `message`, for work whose length is unknown; finish it with
/// [`ProgressBar::finish_and_clear`].
pub(crate) fn spinner(message: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, target());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(message.to_owned());
    if !bar.is_hidden() {
        bar.enable_steady_tick(TICK);
    }
    bar
}

/// A bar of `len` steps with `message`.
pub(crate) fn bar(len: u64, message: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), target());
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_owned());
    bar
}

/// Whether the persistent search index of `root` has to be built from nothing (no cache
/// file yet), which is the slow case worth a spinner.
pub(crate) fn index_is_cold(root: &std::path::Path) -> bool {
    !root.join(scriptorium_backend_api::inspect::INDEX_CACHE_PATH).is_file()
}
