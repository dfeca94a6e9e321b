//! `LocalBackend::hand_edit`, the owner's whole-file edits (the HTTP server's topic routes,
//! restore and `validate`), and `LocalBackend::lock`, on copies of the reference-written
//! `tx-base` workspace: installs through the warm handle that the next read sees at once,
//! dry runs and refusals that change no byte, and the lock as another writer holds it.

use std::time::Duration;

use scriptorium_backend_api::{ErrorCode, HandEdit};
use scriptorium_transaction::Workspace;
use serde_json::json;

use crate::support::{Fixture, TestResult, cited_topic, files};

const TEA: &str = "topics/tea.md";
const TRUSTED: &str = "openprogram/sess-7f2a/m4";

fn tea(sentence: &str) -> String {
    cited_topic("Tea", sentence, TRUSTED)
}

#[test]
fn a_hand_edit_installs_through_the_warm_backend_and_the_next_read_sees_it() -> TestResult {
    let fx = Fixture::tx_base("hand-edit-install")?;
    // Warm the backend first: the edit must reach its caches, not only the disk.
    let (_, before) = fx.call("memory_search", &json!({"query": "oolong"}), &crate::owner());
    assert!(!before.to_string().contains(TEA), "{before}");

    let edit = HandEdit::one(TEA, Some(tea("Craig drinks oolong every morning.")), "memory: hand edit topics/tea.md");
    let result = fx.backend.hand_edit(&edit)?.ok_or("an install gives a result")?;
    assert_eq!(result.revision, fx.revision()?);
    assert!(result.changed_files.iter().any(|path| path == TEA), "{:?}", result.changed_files);
    assert!(fx.read(TEA).contains("Craig drinks oolong every morning."));
    let (output, _) = fx.call("memory_search", &json!({"query": "oolong"}), &crate::owner());
    assert!(output.contains(TEA), "the warm index missed the hand edit: {output}");
    let history = Workspace::open(fx.memory())?;
    assert_eq!(history.revision()?, result.revision);

    // A delete is a hand edit too.
    let gone = fx.backend.hand_edit(&HandEdit::one(TEA, None, "memory: hand delete topics/tea.md"))?;
    assert!(gone.is_some_and(|result| result.changed_files.iter().any(|path| path == TEA)));
    assert!(!fx.memory().join(TEA).exists());
    let (output, _) = fx.call("memory_search", &json!({"query": "oolong"}), &crate::owner());
    assert!(!output.contains(TEA), "{output}");
    Ok(())
}

#[test]
fn a_dry_run_and_a_refused_edit_change_nothing() -> TestResult {
    let fx = Fixture::tx_base("hand-edit-dry")?;
    let before = files(&fx.memory())?;
    let revision = fx.revision()?;

    let valid = HandEdit { dry_run: true, ..HandEdit::one(TEA, Some(tea("Craig likes oolong.")), "memory: validate") };
    assert!(fx.backend.hand_edit(&valid)?.is_none(), "a dry run installs nothing");

    // Uncited prose: the violations come back as details, for the page to show by line.
    let uncited = "# Tea\n\nCraig likes oolong.\n".to_owned();
    for dry_run in [true, false] {
        let edit = HandEdit { dry_run, ..HandEdit::one(TEA, Some(uncited.clone()), "memory: hand edit") };
        let error = fx.backend.hand_edit(&edit).err().ok_or("uncited prose is refused")?;
        assert_eq!(error.code(), ErrorCode::InvalidTopicFormat, "{error}");
        let details = error.details().ok_or("the violations are details")?;
        assert!(details.get("violations").and_then(|v| v.as_array()).is_some_and(|v| !v.is_empty()), "{details:?}");
    }
    for (path, code) in [
        ("../outside.md", ErrorCode::PathOutsideWorkspace),
        (".scriptorium/x.md", ErrorCode::PathOutsideWorkspace),
        ("sources/openprogram/_v2/x.md", ErrorCode::ReadOnlyPath),
        ("core.md", ErrorCode::ReadOnlyPath),
    ] {
        let edit = HandEdit::one(path, Some(tea("Craig likes oolong.")), "memory: hand edit");
        let error = fx.backend.hand_edit(&edit).err().ok_or("a path that is no topic file is refused")?;
        assert_eq!(error.code(), code, "{path}: {error}");
    }
    assert_eq!(files(&fx.memory())?, before, "a dry run or a refused edit changed a file");
    assert_eq!(fx.revision()?, revision);
    Ok(())
}

#[test]
fn the_lock_waits_for_another_writer_and_gives_up_after_its_timeout() -> TestResult {
    let fx = Fixture::tx_base("hand-edit-lock")?;
    // Warm the backend first: opening its workspace takes the lock too, with its own wait.
    drop(fx.backend.lock(Duration::from_secs(1))?);
    let other = Workspace::open(fx.memory())?;
    let held = other.lock(Duration::from_secs(1))?;
    let error = fx.backend.lock(Duration::from_millis(100)).err().ok_or("the lock is held elsewhere")?;
    assert_eq!(error.code(), ErrorCode::ConcurrentUpdate);
    drop(held);
    let mine = fx.backend.lock(Duration::from_secs(1))?;
    // While the backend holds it, another writer waits in turn.
    let refused = other.lock(Duration::from_millis(100)).err().ok_or("the backend holds the lock")?;
    assert_eq!(refused.code().as_str(), "CONCURRENT_UPDATE");
    drop(mine);
    Ok(())
}
