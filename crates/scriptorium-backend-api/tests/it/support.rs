//! Shared fixtures: temporary directories, copies of the vectors' reference-written
//! `tx-base` workspace behind a real `LocalBackend`, byte snapshots for "nothing changed"
//! checks, and a scripted Chat Completions server on loopback that stands in for the
//! remote writer model, which cannot run here.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use scriptorium_backend_api::config::MemoryConfig;
use scriptorium_backend_api::{Caller, LocalBackend, MemoryBackend};
use scriptorium_transaction::Workspace;
use serde_json::{Value, json};

pub(crate) type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A fresh directory under the system temp dir, removed (with its content) on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(label: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("scriptorium-api-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("the temp dir is writable");
        TempDir(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `tests/vectors/` of the workspace.
pub(crate) fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors")
}

pub(crate) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// Every memory file outside `.scriptorium/` and `.git/` (lock and cache files live
/// there), for "nothing on disk changed" checks.
pub(crate) fn files(root: &Path) -> std::io::Result<BTreeMap<String, Vec<u8>>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if name == ".scriptorium" || name == ".git" {
                continue;
            }
            if entry.file_type()?.is_dir() {
                walk(&entry.path(), &format!("{name}/"), out)?;
            } else {
                out.insert(name, std::fs::read(entry.path())?);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, "", &mut out)?;
    Ok(out)
}

/// A copy of `tx-base` at `<dir>/memory` behind a `LocalBackend` (session store beside it).
pub(crate) struct Fixture {
    pub(crate) dir: TempDir,
    pub(crate) backend: LocalBackend,
}

impl Fixture {
    pub(crate) fn tx_base(label: &str) -> Result<Fixture, Box<dyn std::error::Error>> {
        Fixture::with_config(label, MemoryConfig::default())
    }

    pub(crate) fn with_config(label: &str, config: MemoryConfig) -> Result<Fixture, Box<dyn std::error::Error>> {
        let dir = TempDir::new(label);
        copy_tree(&vectors().join("_resources/tx-base"), &dir.path().join("memory"))?;
        let backend = LocalBackend::new(dir.path().join("memory"), None, config);
        Ok(Fixture { dir, backend })
    }

    pub(crate) fn memory(&self) -> PathBuf {
        self.dir.path().join("memory")
    }

    pub(crate) fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.memory().join(path)).unwrap_or_default()
    }

    pub(crate) fn revision(&self) -> Result<String, Box<dyn std::error::Error>> {
        Ok(Workspace::open(self.memory())?.revision()?)
    }

    /// Call `tool` and parse its answer as JSON (`Null` when it is not JSON).
    pub(crate) fn call(&self, tool: &str, arguments: &Value, caller: &Caller) -> (String, Value) {
        let output = self.backend.call_tool(tool, arguments, caller);
        let parsed = serde_json::from_str(&output).unwrap_or(Value::Null);
        (output, parsed)
    }

    /// `memory_update` with `fields` and the current revision as `base_revision`.
    pub(crate) fn update(&self, fields: Value, caller: &Caller) -> Result<Value, Box<dyn std::error::Error>> {
        let mut fields = fields;
        fields["base_revision"] = json!(self.revision()?);
        Ok(self.call("memory_update", &fields, caller).1)
    }
}

/// The contract code of a `TxError` answer, if it is one.
pub(crate) fn code(answer: &Value) -> Option<&str> {
    (answer["ok"] == false).then(|| answer["error"]["code"].as_str()).flatten()
}

/// Decode standard or URL-safe base64 without padding checks (the archive's meta lines).
pub(crate) fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let (mut out, mut bits, mut acc) = (Vec::new(), 0u32, 0u32);
    for sextet in text.bytes().filter_map(value) {
        acc = (acc << 6) | sextet;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// The decoded `source-meta` JSON of the frame `source_id` in the archive `text`.
pub(crate) fn frame_meta(text: &str, source_id: &str) -> Value {
    let mut lines = text.lines().skip_while(|line| *line != format!("<!-- source-id:{source_id} -->"));
    lines
        .find_map(|line| line.strip_prefix("<!-- source-meta:").and_then(|rest| rest.strip_suffix(" -->")))
        .and_then(|encoded| serde_json::from_slice(&base64(encoded)).ok())
        .unwrap_or(Value::Null)
}

/// A Chat Completions server on loopback answering a script of reply bodies, one per
/// request, and counting what it received. Test code only.
pub(crate) struct ModelServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl ModelServer {
    pub(crate) fn start(script: Vec<Value>) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("a bound listener has an address");
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicUsize::new(0));
        let thread = {
            let (stop, served) = (Arc::clone(&stop), Arc::clone(&served));
            std::thread::spawn(move || {
                let mut script = script.into_iter();
                while let Ok((stream, _)) = listener.accept() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    if read_request(&stream).is_none() {
                        continue;
                    }
                    served.fetch_add(1, Ordering::SeqCst);
                    let (status, body) = match script.next() {
                        Some(body) => (200, body),
                        None => (500, json!({"error": {"message": "script exhausted"}})),
                    };
                    answer(stream, status, &body.to_string());
                }
            })
        };
        ModelServer { addr, stop, served, thread: Some(thread) }
    }

    /// The `memory.*` settings of a writer that talks to this server.
    pub(crate) fn config(&self) -> MemoryConfig {
        MemoryConfig {
            writer_model: "openai-compatible/test-writer".to_owned(),
            writer_base_url: format!("http://{}/v1", self.addr),
            ..MemoryConfig::default()
        }
    }

    pub(crate) fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn read_request(stream: &TcpStream) -> Option<Vec<u8>> {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

fn answer(mut stream: TcpStream, status: u16, body: &str) {
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}

/// A Chat Completions reply of one tool call.
pub(crate) fn tool_call(name: &str, arguments: &Value) -> Value {
    let call =
        json!({"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments.to_string()}});
    reply(json!({"role": "assistant", "content": null, "tool_calls": [call]}), "tool_calls")
}

/// A Chat Completions reply of plain text (the writer's run ends).
pub(crate) fn text(content: &str) -> Value {
    reply(json!({"role": "assistant", "content": content}), "stop")
}

fn reply(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1_764_633_600, "model": "test-writer",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    })
}

/// A topic file of one paragraph citing `source` (a bare handle, as the writer's prompt gives it).
pub(crate) fn cited_topic(heading: &str, sentence: &str, source: &str) -> String {
    format!("# {heading}\n\n{sentence}[^e1]\n\n[^e1]: Time: `2024-05-01`; Sources: [fact]({source})\n")
}
