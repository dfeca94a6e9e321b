//! Generated Claude Code trees: importing a file in one go equals importing it as it
//! grows, cut at random bytes (mid-line included).

use std::io::Write;

use proptest::prelude::*;
use scriptorium_writer_runtime::import::Format;
use serde_json::json;

use super::{run, snapshot, store};
use crate::support::TempDir;

/// One generated line: its kind, which earlier line it hangs from, and a text seed.
#[derive(Clone, Debug)]
struct Step {
    kind: u8,
    parent: prop::sample::Index,
    text: String,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    steps_of(7)
}

/// Steps whose kinds are below `kinds` (7 leaves out the `last-prompt` markers, so the
/// committed regressions replay the cases they were found with).
fn steps_of(kinds: u8) -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (0u8..kinds, any::<prop::sample::Index>(), "[a-zé \\r\\n]{0,12}").prop_map(|(kind, parent, text)| Step {
            kind,
            parent,
            text,
        }),
        1..40,
    )
}

/// The transcript bytes of `steps`: users, replies (new or continuing the line before),
/// tool results, meta lines, orphans, malformed lines and `last-prompt` markers naming an
/// earlier line (or, with an empty text seed, a line the file lacks).
fn transcript(steps: &[Step]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut uuids: Vec<String> = Vec::new();
    let mut last_message: Option<(String, String)> = None;
    for (n, step) in steps.iter().enumerate() {
        let uuid = format!("u{n}");
        let parent = if uuids.is_empty() { None } else { Some(step.parent.get(&uuids).clone()) };
        let line = match step.kind {
            0 => {
                json!({"type": "user", "uuid": uuid, "parentUuid": parent, "message": {"role": "user", "content": step.text}})
            }
            1 => {
                let id = format!("msg_{n}");
                last_message = Some((id.clone(), uuid.clone()));
                json!({"type": "assistant", "uuid": uuid, "parentUuid": parent,
                       "message": {"id": id, "role": "assistant", "content": [{"type": "text", "text": step.text}]}})
            }
            2 => match last_message.clone() {
                // A continuation hangs from the previous line of its message.
                Some((id, previous)) => {
                    last_message = Some((id.clone(), uuid.clone()));
                    json!({"type": "assistant", "uuid": uuid, "parentUuid": previous,
                           "message": {"id": id, "role": "assistant", "content": [{"type": "text", "text": step.text}]}})
                }
                None => json!({"type": "system", "uuid": uuid, "parentUuid": parent, "subtype": "x"}),
            },
            3 => json!({"type": "user", "uuid": uuid, "parentUuid": parent,
                        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": step.text}]}}),
            4 => {
                json!({"type": "user", "uuid": uuid, "parentUuid": parent, "isMeta": true, "message": {"role": "user", "content": step.text}})
            }
            5 => {
                json!({"type": "user", "uuid": uuid, "parentUuid": format!("missing{n}"), "message": {"role": "user", "content": step.text}})
            }
            7 => {
                let leaf = if step.text.is_empty() { Some(format!("missing{n}")) } else { parent };
                let marker = json!({"type": "last-prompt", "leafUuid": leaf, "sessionId": "s"});
                out.extend_from_slice(marker.to_string().as_bytes());
                out.push(b'\n');
                continue;
            }
            _ => {
                out.extend_from_slice(b"{\"broken\": \n");
                continue;
            }
        };
        if step.kind != 1 && step.kind != 2 {
            last_message = None;
        }
        uuids.push(uuid);
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn one_go_equals_random_chunks(steps in steps(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
        one_go_equals_chunks(&steps, &cuts)?;
    }

    #[test]
    fn one_go_equals_random_chunks_with_markers(steps in steps_of(8), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
        one_go_equals_chunks(&steps, &cuts)?;
    }
}

/// Importing the transcript of `steps` in one go and as it grows (cut at `cuts`) leaves
/// the same session, and a last run adds nothing.
fn one_go_equals_chunks(steps: &[Step], cuts: &[prop::sample::Index]) -> Result<(), TestCaseError> {
    let bytes = transcript(steps);
    let session = "claude-code:s";
    let dir = TempDir::new("import-prop");
    let whole = dir.path().join("whole").join("s.jsonl");
    std::fs::create_dir_all(whole.parent().expect("a parent")).expect("the test step");
    std::fs::write(&whole, &bytes).expect("the test step");
    let once = store(&dir);
    run(&once, Format::ClaudeCode, &[whole]).expect("the test step");

    let grown_dir = TempDir::new("import-prop-grown");
    let grown = grown_dir.path().join("s.jsonl");
    let chunked = store(&grown_dir);
    let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.push(bytes.len());
    let mut file = std::fs::File::create(&grown).expect("the test step");
    let mut written = 0;
    for cut in cuts {
        file.write_all(&bytes[written..cut]).expect("the test step");
        file.flush().expect("the test step");
        written = cut;
        run(&chunked, Format::ClaudeCode, std::slice::from_ref(&grown)).expect("the test step");
    }
    prop_assert_eq!(snapshot(&chunked, session), snapshot(&once, session));
    let again = run(&chunked, Format::ClaudeCode, &[grown]).expect("the test step");
    prop_assert_eq!(again.nodes_added + again.turns_extended, 0);
    Ok(())
}
