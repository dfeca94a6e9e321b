//! The web page in a real browser: headless Chromium, driven over WebDriver, on the real
//! `scriptorium serve` binary serving a copy of the example workspace. One browser for
//! the whole walk; a screenshot of each view goes to `target/tmp/web-screenshots/`.

use std::path::PathBuf;

use serde_json::json;

use crate::TempDir;
use crate::serve_client::{BoxError, tree_hash};
use crate::serve_routes::example_server;
use crate::web_driver::{Browser, browser_or_skip};

type Result<T = ()> = std::result::Result<T, BoxError>;

const TOPIC: &str = "topics/garden/raised-bed.md";

fn screenshots() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots")
}

#[test]
fn web_page_reads_searches_edits_and_restores_in_a_browser() -> Result {
    let Some((chromium, driver)) = browser_or_skip()? else { return Ok(()) };
    let dir = TempDir::new()?;
    let server = example_server(&dir, &[])?;
    // A rendered core.md, so the core view has a render report to draw.
    let core = "# Core\n\nAda keeps the garden.[^e-c7eb913ad2]\n\n[^e-c7eb913ad2]: Time: `2026-03-14`; Sources: [openprogram/sess-garden/g1](../sources/openprogram/_v2/sess-garden.md#source-87bc8264ecf1eb77)\n";
    let put = server.call("PUT", "/api/memory/core", Some(&json!({"content": core})))?;
    assert_eq!(put.status, 200, "{}", put.text());
    let shots = screenshots();
    let browser = Browser::launch(&chromium, &driver)?;
    let base = format!("http://{}", server.addr);

    // The address with the token becomes a cookie and a clean address.
    browser.goto(&format!("{base}/?token={}", server.token))?;
    let links = browser.wait_all("#tree a.topic-link", 2)?;
    assert_eq!(browser.url()?, format!("{base}/"), "the token left the address bar");
    let mut paths = Vec::new();
    for link in &links {
        paths.push(browser.attribute(link, "data-path")?.unwrap_or_default());
    }
    assert_eq!(paths, ["garden/raised-bed.md", "people/book-club.md"]);
    browser.wait_text("#status", "3 topics")?;
    check_png(&browser.screenshot(&shots, "01-topic-tree")?)?;

    // A topic read by its evidence: a citation opens its exact source frame.
    browser.click(&links[0])?;
    let paragraphs = browser.wait_all("#topic .para", 2)?;
    assert!(browser.text(&paragraphs[0])?.contains("Tomatoes grow on the south side"));
    let cite = browser.wait("#topic a.cite")?;
    let handle = browser.attribute(&cite, "data-handle")?.ok_or("data-handle")?;
    assert_eq!(handle, "../../sources/openprogram/_v2/sess-garden.md#source-87bc8264ecf1eb77");
    browser.click(&cite)?;
    let frame = browser.wait_text("#frame-text", "six hours of sun")?;
    let expected = server.get(&format!("/api/memory/source?handle={}", handle.replace('#', "%23")))?.json();
    assert_eq!(
        frame.trim(),
        expected["text"].as_str().ok_or("text")?.replace("\r\n", "\n").trim(),
        "the panel shows the frame verbatim"
    );
    let facts = browser.wait_text("#frame .frame-facts", "2026-03-14T09:12:03+01:00")?;
    assert!(facts.contains("trusted") && facts.contains("sess-garden.md"), "{facts}");
    check_png(&browser.screenshot(&shots, "02-topic-and-source-frame")?)?;

    // Search with a path filter: only hits under that path.
    browser.goto(&format!("{base}/#/search"))?;
    let words = browser.wait("#search-q")?;
    browser.type_text(&words, "tomatoes")?;
    browser.type_text(&browser.wait("#search-path-prefix")?, "sources/")?;
    browser.click(&browser.wait("#search-go")?)?;
    browser.wait_text("#search-count", "result")?;
    let hits = browser.wait_all("#search-results .hit", 1)?;
    for hit in &hits {
        let text = browser.text(hit)?;
        assert!(text.starts_with("sources/"), "the path filter holds: {text}");
    }
    let all = server.get("/api/memory/search?q=tomatoes&top_k=20")?.json();
    let everywhere = all["results"].as_array().ok_or("results")?.len();
    assert!(everywhere > hits.len(), "the filter narrowed {everywhere} hits to {}", hits.len());
    // A source hit opens its own frame (the panel still shows the earlier one until then).
    let place = browser.text(&browser.wait("#search-results .hit .hit-meta code")?)?;
    assert!(place.starts_with("sources/") && !facts.contains(&place), "a different frame than before: {place}");
    browser.click(&browser.wait("#search-results .hit a.hit-open")?)?;
    browser.wait_text("#frame .frame-facts", &place)?;
    // And the speaker and date filters: Ada's words of March 2026 only.
    browser.type_text(&browser.wait("#search-speaker")?, "Ada")?;
    browser.type_text(&browser.wait("#search-date-from")?, "2026-03-01")?;
    browser.type_text(&browser.wait("#search-date-to")?, "2026-03-31")?;
    browser.clear(&words)?;
    browser.type_text(&words, "Thursday month")?;
    browser.click(&browser.wait("#search-go")?)?;
    browser.wait_text("#search-count", "result")?;
    let hits = browser.wait_all("#search-results .hit", 1)?;
    for hit in &hits {
        let text = browser.text(hit)?;
        assert!(text.contains("2026-03") && text.contains("Ada (4402)"), "the speaker and date filters hold: {text}");
    }
    // Ada's pasted markup is memory text: shown as text, never made into an element.
    let pasted = hits.iter().map(|hit| browser.text(hit)).collect::<std::result::Result<Vec<_>, _>>()?;
    assert!(pasted.iter().any(|text| text.contains("<a id=\"source-0000000000000000\"></a>")), "{pasted:?}");
    assert!(browser.all("#source-0000000000000000")?.is_empty(), "memory text became markup");
    check_png(&browser.screenshot(&shots, "03-search")?)?;

    // Core: the budget bar and the render report.
    browser.goto(&format!("{base}/#/core"))?;
    let budget = browser.wait_text("#budget-text", "of 2000 tokens used")?;
    let used: u64 = budget.split(' ').next().ok_or("used")?.parse()?;
    assert!(used > 0, "{budget}");
    let bar = browser.wait("#budget-used")?;
    let width: f64 = browser.attribute(&bar, "width")?.ok_or("width")?.parse()?;
    assert!(width > 0.0 && width < 600.0, "the bar shows {used} of 2000 as {width} of 600");
    browser.wait("#left-out")?;
    check_png(&browser.screenshot(&shots, "04-core-budget")?)?;

    // The timeline by day: one bar per day, oldest first; a bar opens that day's notes.
    browser.goto(&format!("{base}/#/timeline"))?;
    let days = server.get("/api/memory/timeline")?.json();
    let days = days.as_array().ok_or("timeline")?.len();
    assert!(days >= 2, "the example workspace has a timeline");
    let bars = browser.wait_all("#timeline-chart rect.day-bar", days)?;
    let first = browser.attribute(&bars[0], "data-date")?.ok_or("data-date")?;
    let last = browser.attribute(&bars[days - 1], "data-date")?.ok_or("data-date")?;
    assert!(first < last, "{first} before {last}");
    browser.click(&bars[days - 1])?;
    let day = server.get(&format!("/api/memory/timeline/{last}"))?.json();
    let line = day["content"].as_str().ok_or("content")?.lines().find(|l| l.len() > 10).ok_or("a line")?.to_owned();
    browser.wait_text("#timeline-day", &last)?;
    browser.wait_text("#timeline-day pre", line.trim())?;
    check_png(&browser.screenshot(&shots, "05-timeline")?)?;

    // Editing: an uncited paragraph is refused inline and nothing on disk changes.
    let original = std::fs::read_to_string(server.workspace.join(TOPIC))?;
    let before = tree_hash(&server.workspace, false)?;
    browser.goto(&format!("{base}/#/edit/garden/raised-bed.md"))?;
    let editor = browser.wait("#editor")?;
    browser.wait_text("#view h2", "Edit")?;
    assert_eq!(browser.value(&editor)?, original);
    let end_of_text = "\u{E009}\u{E010}\u{E000}";
    browser.click(&editor)?;
    browser.type_text(&editor, &format!("{end_of_text}\nThe shed is painted green.\n"))?;
    browser.click(&browser.wait("#edit-save")?)?;
    let errors = browser.wait_text("#edit-errors", "Not saved")?;
    assert!(
        errors.contains("line ") && errors.contains("TOPIC_UNCITED_TEXT"),
        "the error names its line and rule: {errors}"
    );
    let violation = browser.wait(".violation")?;
    let line: usize = browser.attribute(&violation, "data-line")?.ok_or("data-line")?.parse()?;
    let typed = browser.value(&editor)?;
    assert_eq!(typed.lines().nth(line - 1), Some("The shed is painted green."), "line {line} of {typed:?}");
    assert_eq!(tree_hash(&server.workspace, false)?, before, "a refused edit changed the workspace");
    check_png(&browser.screenshot(&shots, "06-edit-refused")?)?;

    // A valid edit saves; then the older revision is restored from the history view.
    browser.clear(&editor)?;
    browser.type_text(&editor, &original.replace("two litres", "three litres"))?;
    browser.click(&browser.wait("#edit-save")?)?;
    browser.wait_text("#edit-outcome", "Saved.")?;
    assert!(std::fs::read_to_string(server.workspace.join(TOPIC))?.contains("three litres"));
    browser.goto(&format!("{base}/#/history/garden/raised-bed.md"))?;
    let revisions = browser.wait_all(".revision", 2)?;
    browser.click(&browser.wait(".revision .show-diff")?)?;
    let diff = browser.wait_text(".revision-detail .diff", "three litres")?;
    assert!(diff.contains("-The tomatoes are watered every second morning, two litres"), "{diff}");
    let older = browser.attribute(&revisions[1], "data-commit")?.ok_or("data-commit")?;
    browser.click(&browser.wait(&format!(".revision[data-commit='{older}'] button.restore"))?)?;
    browser.wait_text("#restore-outcome", "Restored")?;
    assert_eq!(std::fs::read_to_string(server.workspace.join(TOPIC))?, original, "the restore brought the bytes back");
    check_png(&browser.screenshot(&shots, "07-history-restored")?)?;
    Ok(())
}

/// A screenshot is a real PNG of a real window (not an empty file).
fn check_png(bytes: &[u8]) -> Result {
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(bytes.len() > 2_000, "a {}-byte screenshot is blank", bytes.len());
    Ok(())
}
