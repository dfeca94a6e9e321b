//! Seeded Claude Code session files shaped like real ones: per exchange a prompt, a
//! reply split over thinking, text and tool-use lines (one `message.id`), tool results
//! with sizeable output, progress lines, meta and command lines, an edit branch now and
//! then, and a compaction boundary; every line carries the usual envelope.

use serde_json::json;

use crate::SplitMix64;

const WORDS: &[&str] = &[
    "the", "memory", "file", "topic", "tea", "build", "test", "commit", "branch", "café", "naïve", "记忆", "会话",
    "rust", "sqlite", "index", "parse", "error", "line", "reply", "agent", "hook", "import", "store", "green",
];

fn sentence(rng: &mut SplitMix64, words: usize) -> String {
    let mut out = String::new();
    for i in 0..words {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(rng.pick(WORDS));
    }
    out
}

/// One session file of about `target` bytes for session `session`.
pub fn claude_code_session(seed: u64, session: &str, target: usize) -> Vec<u8> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(target + 4096);
    let mut n = 0u64;
    let mut parent: Option<String> = None;
    let mut previous_prompt_parent: Option<String> = None;
    let push = |out: &mut Vec<u8>, value: serde_json::Value| {
        out.extend_from_slice(value.to_string().as_bytes());
        out.push(b'\n');
    };
    let envelope = |uuid: &str, parent: &Option<String>, kind: &str, n: u64| {
        json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/home/ana/src/project",
            "sessionId": session, "version": "2.1.37", "gitBranch": "main", "type": kind, "uuid": uuid,
            "timestamp": format!("2026-11-{:02}T{:02}:{:02}:{:02}.000Z", 1 + (n / 86_400) % 28, (n / 3600) % 24, (n / 60) % 60, n % 60),
        })
    };
    let mut exchange = 0u64;
    while out.len() < target {
        exchange += 1;
        let next = |n: &mut u64| {
            *n += 1;
            format!("{session}-{:08}", *n)
        };
        // An edit: the prompt hangs from where the previous prompt hung.
        let prompt_parent = if rng.chance(5) { previous_prompt_parent.clone() } else { parent.clone() };
        previous_prompt_parent = prompt_parent.clone();
        let uuid = next(&mut n);
        let mut line = envelope(&uuid, &prompt_parent, "user", n);
        line["message"] = json!({"role": "user", "content": sentence_of(&mut rng, 12, 40)});
        push(&mut out, line);
        parent = Some(uuid);
        let steps = 1 + rng.below(4);
        for step in 0..steps {
            let message_id = format!("msg_{session}_{exchange}_{step}");
            let blocks = [
                json!([{"type": "thinking", "thinking": sentence(&mut rng, 30), "signature": "EqQBCkYIBRgCKkA"}]),
                json!([{"type": "text", "text": sentence_of(&mut rng, 20, 80)}]),
                json!([{"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash", "input": {"command": "cargo test -p x", "description": sentence(&mut rng, 6)}}]),
            ];
            for content in blocks {
                let uuid = next(&mut n);
                let mut line = envelope(&uuid, &parent, "assistant", n);
                line["requestId"] = json!(format!("req_{message_id}"));
                line["message"] = json!({"id": message_id, "type": "message", "role": "assistant", "model": "claude-opus-4-5",
                    "content": content, "stop_reason": null, "usage": {"input_tokens": 4, "cache_read_input_tokens": 30_000, "output_tokens": 120}});
                push(&mut out, line);
                parent = Some(uuid);
            }
            if rng.chance(50) {
                let uuid = next(&mut n);
                let mut line = envelope(&uuid, &parent, "progress", n);
                line["data"] = json!({"type": "bash_progress", "output": sentence(&mut rng, 20)});
                push(&mut out, line);
            }
            let uuid = next(&mut n);
            let output = sentence_of(&mut rng, 100, 600);
            let mut line = envelope(&uuid, &parent, "user", n);
            line["message"] = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": output}]});
            line["toolUseResult"] = json!({"stdout": "…", "stderr": "", "interrupted": false});
            push(&mut out, line);
            parent = Some(uuid);
        }
        let uuid = next(&mut n);
        let mut line = envelope(&uuid, &parent, "assistant", n);
        line["message"] = json!({"id": format!("msg_{session}_{exchange}_final"), "role": "assistant", "model": "claude-opus-4-5",
            "content": [{"type": "text", "text": sentence_of(&mut rng, 30, 120)}]});
        push(&mut out, line);
        parent = Some(uuid);
        if rng.chance(10) {
            let uuid = next(&mut n);
            let mut line = envelope(&uuid, &parent, "user", n);
            line["message"] = json!({"role": "user", "content": "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"});
            push(&mut out, line);
            parent = Some(uuid);
        }
        if rng.chance(2) {
            let uuid = next(&mut n);
            let mut line = envelope(&uuid, &None, "system", n);
            line["subtype"] = json!("compact_boundary");
            line["logicalParentUuid"] = json!(parent);
            line["compactMetadata"] = json!({"trigger": "auto", "preTokens": 160_000});
            push(&mut out, line);
            parent = Some(uuid);
        }
        let uuid = next(&mut n);
        let mut line = envelope(&uuid, &parent, "system", n);
        line["subtype"] = json!("turn_duration");
        line["durationMs"] = json!(1000 + rng.below(90_000));
        push(&mut out, line);
        parent = Some(uuid);
    }
    out
}

/// A sentence of `base` plus up to `spread` more words (one borrow of `rng` at a time).
fn sentence_of(rng: &mut SplitMix64, base: usize, spread: usize) -> String {
    let len = base + rng.below(spread);
    sentence(rng, len)
}
