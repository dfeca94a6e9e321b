//! Unpaired group speech (spec 02 §2.12): archived as a pending source under its quota,
//! refused when empty, too large or over the hourly limit, and never offered to the
//! writer.

use scriptorium_archive_format::{SourceMeta, TrustState, parse_bytes};
use scriptorium_writer_runtime::{MAX_PER_HOUR, QUOTA_FILE, UnpairedMessage};
use serde_json::json;

use crate::support::{Fixture, Script, T0, TestResult, config};

fn message(text: &str) -> UnpairedMessage<'_> {
    UnpairedMessage {
        channel: "telegram",
        account_id: "bot1",
        chat_id: "-100",
        message_id: "77",
        user_id: "4402",
        user_display: "Bo",
        text,
        timestamp: T0,
    }
}

#[test]
fn a_blocked_senders_message_is_archived_pending_and_counted_against_the_quota() -> TestResult {
    let fx = Fixture::new("unpaired", Script::Facts, config(8000))?;
    let id = fx.runtime.archive_unpaired_group_message(&message("hello group"))?.ok_or("refused")?;
    let (provider, rest) = id.split_once('/').ok_or("no provider")?;
    assert_eq!(provider, "channel-telegram");
    let (thread, message_id) = rest.split_once('/').ok_or("no thread")?;
    assert_eq!(thread, "bot1%3A-100");
    assert_eq!(message_id.len(), 24);
    // The thread id is percent-encoded, and the archive path quotes it once more.
    let path = "sources/channel-telegram/_v2/bot1%253A-100.md";
    let bytes = std::fs::read(fx.memory().join(path))?;
    let parsed = parse_bytes(&bytes, path);
    let frame = parsed.frames.first().ok_or("no frame")?;
    let meta: Option<&SourceMeta> = frame.meta.as_deref();
    assert_eq!(meta.map(|m| m.trust_state), Some(TrustState::Pending));
    // The same message again is not archived twice, but takes a quota slot.
    assert_eq!(fx.runtime.archive_unpaired_group_message(&message("hello group"))?.as_deref(), Some(id.as_str()));
    let again = std::fs::read(fx.memory().join(path))?;
    let parsed = parse_bytes(&again, path);
    assert_eq!(parsed.frames.len(), 1);
    let quota: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fx.memory().join(".scriptorium").join(QUOTA_FILE))?)?;
    assert_eq!(quota, json!({"version": 1, "accepted_at": [T0 + 60.0, T0 + 60.0]}));
    assert_eq!(fx.writer.writes(), 0, "pending sources never reach the writer");
    assert!(!fx.memory().join("topics/facts.md").exists());
    Ok(())
}

#[test]
fn empty_oversized_and_over_quota_messages_are_refused_without_archiving() -> TestResult {
    let fx = Fixture::new("unpaired-refuse", Script::Facts, config(8000))?;
    let big = "x".repeat(64 * 1024 + 1);
    let long_name = "n".repeat(4097);
    let mut named = message("hi");
    named.user_display = &long_name;
    for refused in [message(""), message(&big), named] {
        assert_eq!(fx.runtime.archive_unpaired_group_message(&refused)?, None);
    }
    assert!(!fx.memory().join("sources/channel-telegram").exists());
    let quota = fx.memory().join(".scriptorium").join(QUOTA_FILE);
    let now = T0 + 60.0;
    let full: Vec<f64> = (0..MAX_PER_HOUR).map(|i| now - 3599.0 + i as f64 / 1000.0).collect();
    let bytes = format!("{}\n", json!({"version": 1, "accepted_at": full}));
    std::fs::write(&quota, &bytes)?;
    assert_eq!(fx.runtime.archive_unpaired_group_message(&message("one more"))?, None);
    assert_eq!(std::fs::read_to_string(&quota)?, bytes, "a refusal leaves the quota as it was");
    // An hour later the oldest slots have expired.
    fx.clock.set(now + 2.0);
    assert!(fx.runtime.archive_unpaired_group_message(&message("one more"))?.is_some());
    Ok(())
}
