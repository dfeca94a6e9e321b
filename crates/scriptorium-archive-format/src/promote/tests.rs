//! Promotion rewrites exactly one line: on generated archives (pending, trusted and
//! bodies that look like frames), the promoted bytes are the old bytes with only the
//! frame's `source-meta` line replaced, every frame reads back the same except that one
//! is trusted, and a second promotion changes nothing.

use proptest::prelude::*;

use super::*;
use crate::{MemoryTree, SourceRecord, parse_bytes, plan_append};

fn archive(bodies: &[(String, bool)]) -> Vec<u8> {
    let records: Vec<SourceRecord> = bodies
        .iter()
        .enumerate()
        .map(|(n, (body, pending))| {
            let mut record = SourceRecord::new("telegram", "g1", format!("m{n}"), n as i64, "user", body.clone());
            record.speaker_id = Some(format!("id {n}%"));
            if *pending {
                record.trust_state = "pending".to_owned();
                record.principal_id = format!("telegram/{n}");
            }
            record
        })
        .collect();
    let mut tree = MemoryTree::new();
    let plan = plan_append(&records, &tree).unwrap_or_else(|error| panic!("{error}"));
    tree.apply(&plan);
    tree.get("sources/telegram/_v2/g1.md").map(<[u8]>::to_vec).unwrap_or_default()
}

fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split(|&b| b == b'\n').collect()
}

proptest! {
    #[test]
    fn only_the_meta_line_changes(
        bodies in proptest::collection::vec(("[a-z \\r\\n<>!-]{0,30}", any::<bool>()), 1..6),
        pick in any::<proptest::sample::Index>(),
    ) {
        let bytes = archive(&bodies);
        let n = pick.index(bodies.len());
        let id = format!("telegram/g1/m{n}");
        let plan = plan_promotion(&bytes, &id).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(plan.meta.trust_state, TrustState::Trusted);
        let speaker = format!("id {n}%");
        prop_assert_eq!(plan.speaker_id.as_deref(), Some(speaker.as_str()));
        let before = parse_bytes(&bytes, &plan.path);
        let Some(promoted) = plan.bytes else {
            prop_assert!(!bodies[n].1, "a pending source is rewritten");
            return Ok(());
        };
        prop_assert!(bodies[n].1, "a trusted source is left alone");
        let after = parse_bytes(&promoted, &plan.path);
        prop_assert!(after.is_complete());
        prop_assert_eq!(after.frames.len(), before.frames.len());
        for (old, new) in before.frames.iter().zip(&after.frames) {
            prop_assert_eq!(old.record_text, new.record_text);
            prop_assert_eq!(&old.speaker_id, &new.speaker_id);
            if old.source_id == id {
                let mut expected = old.effective_meta();
                expected.trust_state = TrustState::Trusted;
                prop_assert_eq!(new.effective_meta(), expected);
            } else {
                prop_assert_eq!(old.effective_meta(), new.effective_meta());
            }
        }
        let (old_lines, new_lines) = (lines(&bytes), lines(&promoted));
        prop_assert_eq!(old_lines.len(), new_lines.len());
        let differing: Vec<usize> = (0..old_lines.len()).filter(|&i| old_lines[i] != new_lines[i]).collect();
        prop_assert_eq!(differing, vec![before.frames[n].meta_line.unwrap_or(usize::MAX)]);
        let again = plan_promotion(&promoted, &id).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(again.bytes, None);
    }
}

#[test]
fn refusals_have_their_codes() {
    let bytes = archive(&[("hello".to_owned(), true)]);
    let code = |bytes: &[u8], id: &str| plan_promotion(bytes, id).err().map(|error| error.code());
    assert_eq!(code(&bytes, "telegram/g1/m9"), Some(ErrorCode::SourceNotFound));
    assert_eq!(code(&bytes, "no-shape"), Some(ErrorCode::InvalidSourceIdShape));
    assert_eq!(code(b"\xff", "telegram/g1/m0"), Some(ErrorCode::NotUtf8));
    let mut torn = bytes.clone();
    torn.truncate(bytes.len() - 3);
    assert_eq!(code(&torn, "telegram/g1/m0"), Some(ErrorCode::IncompleteArchive));
    // A frame without a source-meta line reads as trusted and cannot be promoted.
    let text = String::from_utf8(bytes).unwrap_or_default();
    let bare: String =
        text.lines().filter(|line| !line.starts_with("<!-- source-meta:")).map(|l| format!("{l}\n")).collect();
    assert_eq!(code(bare.as_bytes(), "telegram/g1/m0"), Some(ErrorCode::NoSourceMeta));
}
