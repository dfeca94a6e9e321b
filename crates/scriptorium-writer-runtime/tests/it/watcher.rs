//! The idle-session watcher and the background threads (spec 02 §2.10, §8.1): idle
//! sessions are force-written once per `updated_at`, non-retryable failures are not
//! retried, retryable ones are, a corrupt state stops the scan and is kept, and the stop
//! handle ends the threads promptly.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scriptorium_writer_runtime::{
    AgentError, Background, BackgroundConfig, ErrorCode, IDLE_SECONDS, IngestEvent, ReorganizeStatus, Runtime,
    scan_idle_sessions,
};

use crate::support::{Fixture, Script, T0, TestResult, chain, config};

fn events() -> (Arc<Mutex<Vec<IngestEvent>>>, impl Fn(&IngestEvent)) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    (seen, move |event: &IngestEvent| sink.lock().expect("events").push(event.clone()))
}

#[test]
fn a_session_idle_past_its_allowance_is_force_written_once() -> TestResult {
    let fx = Fixture::new("watch", Script::Facts, config(16_000))?;
    fx.store.append("idle", &chain("a", None, 3, 2, T0), T0)?;
    fx.store.append("busy", &chain("b", None, 2, 2, T0), T0 + 1000.0)?;
    let (seen, sink) = events();
    fx.clock.set(T0 + IDLE_SECONDS);
    let report = scan_idle_sessions(&fx.runtime, &sink)?;
    assert_eq!(report.written, ["idle"], "busy changed 1000 s later, so it is not idle yet");
    assert_eq!(fx.marked("idle")?.len(), 3, "forced: below the threshold and not an hour old, still written");
    assert_eq!(
        *seen.lock().expect("events"),
        [
            IngestEvent::Started { session: "idle".into(), messages: 3 },
            IngestEvent::Ended { session: "idle".into(), ok: true, retryable: false, reason: String::new() },
        ]
    );
    let state = std::fs::read_to_string(fx.memory().join(".scriptorium/session-end.json"))?;
    assert_eq!(state, format!("{{\n  \"idle\": {:?}\n}}", T0));
    // The next scan leaves it alone: the same updated_at has a terminal outcome.
    assert!(scan_idle_sessions(&fx.runtime, &sink)?.written.is_empty());
    assert_eq!(fx.writer.writes(), 1);
    // A new turn moves updated_at and makes it eligible again.
    fx.store.append("idle", &chain("c", Some("a2"), 1, 2, T0 + 10.0), T0 + 10.0)?;
    fx.clock.set(T0 + 10.0 + IDLE_SECONDS);
    assert_eq!(scan_idle_sessions(&fx.runtime, &sink)?.written, ["idle"]);
    assert_eq!(fx.marked("idle")?.len(), 4);
    Ok(())
}

#[test]
fn a_non_retryable_failure_is_not_retried_for_the_same_updated_at_and_a_retryable_one_is() -> TestResult {
    for (status, retryable) in [(401, false), (429, true)] {
        let error = AgentError { http_status: Some(status), ..AgentError::default() };
        let fx = Fixture::new("watch-fail", Script::Fail(error), config(16_000))?;
        fx.store.append("s", &chain("a", None, 2, 2, T0), T0)?;
        fx.clock.set(T0 + 2.0 * IDLE_SECONDS);
        let (seen, sink) = events();
        let first = scan_idle_sessions(&fx.runtime, &sink)?;
        assert_eq!((first.given_up.len(), first.deferred.len()), (usize::from(!retryable), usize::from(retryable)));
        let ended = seen.lock().expect("events").last().cloned();
        assert!(matches!(ended, Some(IngestEvent::Ended { ok: false, retryable: r, .. }) if r == retryable));
        scan_idle_sessions(&fx.runtime, &sink)?;
        assert_eq!(fx.writer.writes(), if retryable { 2 } else { 1 }, "status {status}");
        assert!(fx.marked("s")?.is_empty());
    }
    Ok(())
}

#[test]
fn a_corrupt_state_stops_the_scan_and_is_kept() -> TestResult {
    let fx = Fixture::new("watch-corrupt", Script::Facts, config(16_000))?;
    fx.store.append("s", &chain("a", None, 2, 2, T0), T0)?;
    fx.clock.set(T0 + 2.0 * IDLE_SECONDS);
    let path = fx.memory().join(".scriptorium/session-end.json");
    std::fs::write(&path, b"[1, 2]")?;
    let (_seen, sink) = events();
    let error = scan_idle_sessions(&fx.runtime, &sink).err().map(|e| e.code());
    assert_eq!(error, Some(ErrorCode::WatcherStateCorrupt));
    assert_eq!(std::fs::read(&path)?, b"[1, 2]");
    assert_eq!(fx.writer.writes(), 0);
    Ok(())
}

#[test]
fn the_stop_handle_ends_both_threads_within_a_second() -> TestResult {
    let fx = Fixture::new("watch-stop", Script::Facts, config(16_000))?;
    let Fixture { dir: _dir, runtime, .. } = fx;
    let runtime: Arc<Runtime> = Arc::new(runtime);
    let background = Background::start(
        runtime.clone(),
        BackgroundConfig { poll_interval: Duration::from_secs(3600), ..BackgroundConfig::default() },
        Arc::new(|_: &IngestEvent| {}),
    )?;
    std::thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    background.stop();
    assert!(started.elapsed() < Duration::from_secs(1), "stopping took {:?}", started.elapsed());
    // Reorganize on a workspace without topics has nothing to do.
    assert_eq!(runtime.reorganize()?.status, ReorganizeStatus::Empty);
    Ok(())
}

#[test]
fn the_watcher_thread_scans_after_its_poll_period() -> TestResult {
    let fx = Fixture::new("watch-thread", Script::Facts, config(16_000))?;
    fx.store.append("s", &chain("a", None, 2, 2, T0), T0)?;
    fx.clock.set(T0 + 2.0 * IDLE_SECONDS);
    let Fixture { dir: _dir, runtime, store, .. } = fx;
    let runtime = Arc::new(runtime);
    let (seen, sink) = events();
    let background = Background::start(
        runtime.clone(),
        BackgroundConfig { poll_interval: Duration::from_millis(20), nightly: false, ..BackgroundConfig::default() },
        Arc::new(sink),
    )?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.lock().expect("events").len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    background.stop();
    assert_eq!(seen.lock().expect("events").len(), 2, "one session, written once, two events");
    use scriptorium_writer_runtime::SessionStore;
    let marker =
        store.get_messages("s")?.iter().filter(|m| m.field(scriptorium_writer_runtime::MARKER_KEY).is_some()).count();
    assert_eq!(marker, 2);
    Ok(())
}
