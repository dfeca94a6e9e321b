//! The nightly wait and the watcher state format.

use super::*;

#[test]
fn the_next_nightly_run_is_the_coming_local_hour() {
    let midnight = 1_714_521_600.0; // 2024-05-01T00:00:00Z
    assert_eq!(seconds_until_hour(midnight, 3, 0), 3.0 * 3600.0);
    assert_eq!(seconds_until_hour(midnight + 3.0 * 3600.0, 3, 0), 86_400.0, "exactly at 03:00 waits a day");
    assert_eq!(seconds_until_hour(midnight + 4.0 * 3600.0, 3, 0), 23.0 * 3600.0);
    assert_eq!(seconds_until_hour(midnight, 3, 2 * 3600), 3600.0, "02:00 local at +02:00");
}

#[test]
fn the_state_renders_like_python_and_refuses_non_numbers() {
    let state = BTreeMap::from([("a".to_owned(), 1_714_557_600.0), ("b".to_owned(), 1.5)]);
    assert_eq!(String::from_utf8(render_state(&state)).expect("utf8"), "{\n  \"a\": 1714557600.0,\n  \"b\": 1.5\n}");
    assert_eq!(parse_state(&render_state(&state)).expect("parses"), state);
    assert_eq!(render_state(&BTreeMap::new()), b"{}");
    for bad in [&b"[]"[..], b"{\"a\": \"x\"}", b"nope"] {
        assert_eq!(parse_state(bad).err().map(|e| e.code()), Some(ErrorCode::WatcherStateCorrupt));
    }
}
