//! What each event means (pure), and the generations under real inotify events.

use std::time::Duration;

use notify::event::{AccessKind, AccessMode, CreateKind, DataChange, Flag, ModifyKind, RemoveKind, RenameMode};

use super::*;

fn event(kind: EventKind, paths: &[&str]) -> notify::Result<Event> {
    let mut event = Event::new(kind);
    for path in paths {
        event = event.add_path(PathBuf::from(path));
    }
    Ok(event)
}

const ROOT: &str = "/w/memory";
const WRITE: EventKind = EventKind::Modify(ModifyKind::Data(DataChange::Any));

#[test]
fn visible_paths_move_both_generations_and_hidden_ones_only_the_tree() {
    let root = Path::new(ROOT);
    for path in ["topics/a.md", "sources/s.md", "timeline/2026.md", "core.md", "topics", "topics/people/x.md"] {
        assert_eq!(touch(root, &event(WRITE, &[&format!("{ROOT}/{path}")])), Touch::Visible, "{path}");
    }
    for path in ["topics/.a.md.swp", ".hidden", "memory-superseded/topics/a.md", "sources/.old/s.md"] {
        assert_eq!(touch(root, &event(WRITE, &[&format!("{ROOT}/{path}")])), Touch::Hidden, "{path}");
    }
}

#[test]
fn internal_paths_and_reads_move_nothing() {
    let root = Path::new(ROOT);
    for path in [".scriptorium/retrieval-index.bin", ".git/index", ".scriptorium-old/x", ".scriptorium"] {
        assert_eq!(touch(root, &event(WRITE, &[&format!("{ROOT}/{path}")])), Touch::Nothing, "{path}");
    }
    let topic = format!("{ROOT}/topics/a.md");
    for kind in [
        EventKind::Access(AccessKind::Open(AccessMode::Any)),
        EventKind::Access(AccessKind::Close(AccessMode::Read)),
        EventKind::Access(AccessKind::Read),
    ] {
        assert_eq!(touch(root, &event(kind, &[&topic])), Touch::Nothing, "{kind:?}");
    }
    let closed_written = EventKind::Access(AccessKind::Close(AccessMode::Write));
    assert_eq!(touch(root, &event(closed_written, &[&topic])), Touch::Visible);
}

#[test]
fn what_cannot_be_placed_moves_everything() {
    let root = Path::new(ROOT);
    assert_eq!(touch(root, &Err(notify::Error::generic("queue lost"))), Touch::Lost);
    let rescan = Event::new(EventKind::Other).set_flag(Flag::Rescan);
    assert_eq!(touch(root, &Ok(rescan)), Touch::Visible);
    assert_eq!(touch(root, &event(EventKind::Any, &[])), Touch::Visible);
    assert_eq!(touch(root, &event(WRITE, &["/elsewhere/topics/a.md"])), Touch::Visible);
    assert_eq!(touch(root, &event(EventKind::Remove(RemoveKind::Folder), &[ROOT])), Touch::Lost);
    let moved = EventKind::Modify(ModifyKind::Name(RenameMode::From));
    assert_eq!(touch(root, &event(moved, &[ROOT])), Touch::Lost);
    // One internal and one visible path (a rename out of the runtime directory): visible.
    let both = EventKind::Modify(ModifyKind::Name(RenameMode::Both));
    let paths = [&format!("{ROOT}/.scriptorium/txn/a.md") as &str, &format!("{ROOT}/topics/a.md")];
    assert_eq!(touch(root, &event(both, &paths)), Touch::Visible);
    let folder = EventKind::Create(CreateKind::Folder);
    assert_eq!(touch(root, &event(folder, &[&format!("{ROOT}/topics/new")])), Touch::NewDirectory);
}

#[test]
fn a_new_directory_or_an_error_stops_the_vouching() {
    let watch = Watch { state: Arc::new(State::new()), watcher: None };
    // No watcher: never vouches, whatever the generations say.
    assert_eq!(watch.generation(Scope::Visible), None);

    let state = State::new();
    state.apply(Touch::Hidden);
    assert_eq!((state.visible.load(Ordering::SeqCst), state.tree.load(Ordering::SeqCst)), (0, 1));
    state.apply(Touch::Nothing);
    state.apply(Touch::Visible);
    assert_eq!((state.visible.load(Ordering::SeqCst), state.tree.load(Ordering::SeqCst)), (1, 2));
    state.apply(Touch::NewDirectory);
    assert!(state.settle_until.load(Ordering::SeqCst) > state.now());
    assert!(!state.broken.load(Ordering::SeqCst));
    state.apply(Touch::Lost);
    assert!(state.broken.load(Ordering::SeqCst));
    assert_eq!(state.visible.load(Ordering::SeqCst), 3);
}

/// A fresh directory under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("scriptorium-watch-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("topics")).expect("create the scratch workspace");
        std::fs::create_dir_all(dir.join(".scriptorium")).expect("create its runtime directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Poll until `done`, for at most 10 s (event delivery is asynchronous).
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..1_000 {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn real_events_move_the_generations_and_the_runtime_directory_does_not() {
    let scratch = Scratch::new("events");
    let root = &scratch.0;
    let watch = Watch::start(root, true);
    assert!(watch.is_watching(), "inotify is available on the test machine");
    let visible = watch.generation(Scope::Visible).expect("vouches with no event yet");
    let tree = watch.generation(Scope::Tree).expect("vouches with no event yet");

    // Internal writes and plain reads first, then a hidden file as a marker: events arrive
    // in order, so once the marker moved the tree, the earlier events were all handled.
    std::fs::write(root.join(".scriptorium/retrieval-index.bin"), b"cache").expect("write the cache");
    std::fs::read(root.join(".scriptorium/retrieval-index.bin")).expect("read the cache");
    std::fs::write(root.join("topics/.marker.swp"), b"x").expect("write the marker");
    assert!(eventually(|| watch.generation(Scope::Tree).is_some_and(|now| now > tree)), "the marker arrives");
    assert_eq!(watch.generation(Scope::Visible), Some(visible), "internal and hidden files leave readers alone");

    std::fs::write(root.join("topics/a.md"), b"# A\n").expect("write a topic");
    assert!(eventually(|| watch.generation(Scope::Visible).is_some_and(|now| now > visible)), "a topic write arrives");

    let before = watch.generation(Scope::Visible).expect("vouches after a file event");
    watch.changed();
    assert!(watch.generation(Scope::Visible).expect("vouches") > before, "an own write moves it at once");
}

#[test]
fn a_disabled_watcher_never_vouches() {
    let scratch = Scratch::new("disabled");
    let watch = Watch::start(&scratch.0, false);
    assert!(!watch.is_watching());
    assert_eq!(watch.generation(Scope::Visible), None);
    assert_eq!(watch.generation(Scope::Tree), None);
}
