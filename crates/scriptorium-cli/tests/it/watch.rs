//! `scriptorium watch` as a real long-running process: it imports what is there, then each
//! transcript as it grows or appears (never a subagent's), runs the write hook for sessions
//! that gained turns against the scripted model server, and SIGTERM stops it within 2 s.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::claude_transcript::{assistant, user};
use crate::scripted_model::{serve, topic_writer};
use crate::{TempDir, TestResult, run, scriptorium};

/// A running `watch` and its stderr lines.
struct Watch {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Watch {
    fn start(
        home: &Path,
        workspace: &Path,
        transcripts: &Path,
        model: Option<&str>,
    ) -> Result<Watch, Box<dyn std::error::Error>> {
        let mut cmd = scriptorium(home);
        cmd.args(["watch", "--workspace"]).arg(workspace).arg("--transcripts").arg(transcripts);
        if let Some(url) = model {
            cmd.env("SCRIPTORIUM_WRITER_MODEL", "openai-compatible/test-model")
                .env("SCRIPTORIUM_WRITER_BASE_URL", url)
                .env("SCRIPTORIUM_WRITER_API_KEY", "sk-watch-test");
        }
        let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn()?;
        let stderr = child.stderr.take().ok_or("stderr")?;
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let mut watch = Watch { child, lines, seen: Vec::new() };
        watch.wait_line("scriptorium watch: ready")?;
        Ok(watch)
    }

    /// Wait (at most 30 s) for a stderr line containing `needle`.
    fn wait_line(&mut self, needle: &str) -> Result<String, Box<dyn std::error::Error>> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return Ok(line);
                    }
                }
                Err(_) => break,
            }
        }
        Err(format!("no line with {needle:?}; saw {:#?}", self.seen).into())
    }

    /// SIGTERM, then the exit status and how long the exit took.
    fn terminate(mut self) -> Result<(Option<i32>, Duration), Box<dyn std::error::Error>> {
        let status = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status()?;
        assert!(status.success());
        let sent = Instant::now();
        while sent.elapsed() < Duration::from_secs(10) {
            if let Some(exit) = self.child.try_wait()? {
                return Ok((exit.code(), sent.elapsed()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        Err("watch did not exit within 10 s of SIGTERM".into())
    }
}

fn sessions(home: &Path, workspace: &Path) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let out = run(scriptorium(home).args(["sessions", "--json", "--workspace"]).arg(workspace))?;
    Ok(out.json()?["sessions"].as_array().cloned().unwrap_or_default())
}

/// Poll until `ok` holds for the session list (at most 30 s).
fn until(
    home: &Path,
    workspace: &Path,
    ok: impl Fn(&[Value]) -> bool,
) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let list = sessions(home, workspace)?;
        if ok(&list) || Instant::now() > deadline {
            return Ok(list);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new().append(true).open(path)?.write_all(text.as_bytes())
}

fn pending(list: &[Value], id: &str) -> Option<u64> {
    list.iter().find(|s| s["id"] == id).and_then(|s| s["pending_turns"].as_u64())
}

#[test]
fn watch_imports_as_transcripts_grow_and_stops_on_sigterm() -> TestResult {
    let dir = TempDir::new()?;
    let workspace = dir.path().join("memory");
    std::fs::create_dir_all(workspace.join("topics"))?;
    let projects = dir.path().join(".claude/projects");
    let first = dir.write(
        ".claude/projects/-home-owner-a/s-one.jsonl",
        (user("s-one", "u1", None, "2024-05-01T09:00:00Z", "Hello there.")
            + &assistant("s-one", "a1", "u1", "2024-05-01T09:00:02Z", "Hi!"))
            .as_bytes(),
    )?;
    let watch = Watch::start(dir.path(), &workspace, &projects, None)?;
    assert!(watch.seen.iter().any(|l| l.contains("importing only")), "{:#?}", watch.seen);
    let list = sessions(dir.path(), &workspace)?;
    assert_eq!(pending(&list, "claude-code:s-one"), Some(2), "imported at start: {list:?}");

    append(
        &first,
        &(user("s-one", "u2", Some("a1"), "2024-05-01T09:01:00Z", "Another question, with ünïcode.")
            + &assistant("s-one", "a2", "u2", "2024-05-01T09:01:02Z", "Another answer.")),
    )?;
    let list = until(dir.path(), &workspace, |l| pending(l, "claude-code:s-one") == Some(4))?;
    assert_eq!(pending(&list, "claude-code:s-one"), Some(4), "appended lines imported: {list:?}");

    // A new project directory and session appear while it runs; a subagent transcript does not count.
    dir.write(
        ".claude/projects/-home-owner-b/s-two/subagents/agent-x.jsonl",
        user("s-two", "x1", None, "2024-05-02T10:00:00Z", "subagent work").as_bytes(),
    )?;
    dir.write(
        ".claude/projects/-home-owner-b/s-two.jsonl",
        user("s-two", "v1", None, "2024-05-02T10:00:00Z", "New session.").as_bytes(),
    )?;
    let list = until(dir.path(), &workspace, |l| pending(l, "claude-code:s-two") == Some(1))?;
    assert_eq!(pending(&list, "claude-code:s-two"), Some(1), "{list:?}");
    assert!(!list.iter().any(|s| s["id"].as_str().is_some_and(|id| id.contains("agent-x"))), "{list:?}");

    let (code, took) = watch.terminate()?;
    assert_eq!(code, Some(0));
    assert!(took <= Duration::from_secs(2), "stopping took {took:?}");
    Ok(())
}

#[test]
fn watch_runs_the_write_hook_for_sessions_that_gained_turns() -> TestResult {
    let dir = TempDir::new()?;
    let workspace = dir.path().join("memory");
    std::fs::create_dir_all(workspace.join("topics"))?;
    let projects = dir.path().join(".claude/projects");
    std::fs::create_dir_all(&projects)?;
    let script =
        topic_writer("topics/garden.md", "Garden", vec![("basil", "The owner grows basil between the tomatoes.")]);
    let (url, _seen) = serve(script, Duration::ZERO)?;
    let mut watch = Watch::start(dir.path(), &workspace, &projects, Some(&url))?;
    // Old turns pass the unforced gate (an hour old), so the per-turn hook writes them.
    dir.write(
        ".claude/projects/-home-owner-g/s-garden.jsonl",
        (user("s-garden", "u1", None, "2024-06-01T08:00:00Z", "I grow basil between the tomatoes.")
            + &assistant("s-garden", "a1", "u1", "2024-06-01T08:00:03Z", "Basil and tomatoes, noted."))
            .as_bytes(),
    )?;
    watch.wait_line("session claude-code:s-garden: write hook done")?;
    let topic = std::fs::read_to_string(workspace.join("topics/garden.md"))?;
    assert!(topic.contains("The owner grows basil between the tomatoes."), "{topic}");
    let list = sessions(dir.path(), &workspace)?;
    assert_eq!(pending(&list, "claude-code:s-garden"), Some(0), "{list:?}");
    let (code, took) = watch.terminate()?;
    assert_eq!(code, Some(0));
    assert!(took <= Duration::from_secs(2), "stopping took {took:?}");
    Ok(())
}
