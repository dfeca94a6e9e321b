//! A running `scriptorium serve` (the real binary on 127.0.0.1:0) and a small HTTP/1.1
//! client over a plain `TcpStream`, so a test can send any `Host`, `Origin`, body or
//! raw path it likes.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::scriptorium;

/// A test's boxed error.
pub(crate) type BoxError = Box<dyn std::error::Error>;

/// One answer.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The status code.
    pub(crate) status: u16,
    /// Headers, names lowercased (the last of repeated ones).
    pub(crate) headers: BTreeMap<String, String>,
    /// The body bytes.
    pub(crate) body: Vec<u8>,
}

impl Reply {
    /// The body as JSON (`Null` when it is not JSON).
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as text.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The stable error code of a JSON error body, whichever shape it has.
    pub(crate) fn code(&self) -> Option<String> {
        let body = self.json();
        ["/detail/code", "/error/code", "/code"]
            .iter()
            .find_map(|pointer| body.pointer(pointer).and_then(Value::as_str))
            .map(str::to_owned)
    }
}

/// A server process.
pub(crate) struct Server {
    child: Child,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    /// The bearer token (empty when memory is disabled).
    pub(crate) token: String,
    /// The workspace it serves.
    pub(crate) workspace: PathBuf,
    /// Everything it wrote on stderr so far.
    pub(crate) stderr: Arc<Mutex<String>>,
}

impl Server {
    /// Start `serve` on `workspace` (under a home directory of its own) with `extra`
    /// arguments and environment.
    pub(crate) fn start(workspace: &Path, extra: &[&str], env: &[(&str, &str)]) -> Result<Server, BoxError> {
        let home = workspace.parent().ok_or("workspace has a parent")?;
        let mut cmd = scriptorium(home);
        cmd.arg("serve").arg("--workspace").arg(workspace).args(extra);
        if !extra.contains(&"--addr") {
            cmd.args(["--addr", "127.0.0.1:0"]);
        }
        cmd.env_remove("SCRIPTORIUM_BACKEND").env("SCRIPTORIUM_CONFIG", home.join("no-config.toml"));
        for (key, value) in env {
            cmd.env(key, value);
        }
        let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn()?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let log = Arc::new(Mutex::new(String::new()));
        let (found, wait) = std::sync::mpsc::channel();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut found = Some(found);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = line.strip_prefix("scriptorium serve: listening on http://")
                    && let Some(found) = found.take()
                {
                    let _ = found.send(addr.to_owned());
                }
                if let Ok(mut log) = sink.lock() {
                    log.push_str(&line);
                    log.push('\n');
                }
            }
        });
        let addr = match wait.recv_timeout(Duration::from_secs(60)) {
            Ok(addr) => addr.parse()?,
            Err(_) => {
                let _ = child.kill();
                let log = log.lock().map(|log| log.clone()).unwrap_or_default();
                return Err(format!("serve did not start: {log}").into());
            }
        };
        let token = std::fs::read_to_string(workspace.join(".scriptorium/http-token"))
            .map(|text| text.trim().to_owned())
            .unwrap_or_default();
        Ok(Server { child, addr, token, workspace: workspace.to_path_buf(), stderr: log })
    }

    /// The `Host` value a well-behaved client sends.
    pub(crate) fn host(&self) -> String {
        self.addr.to_string()
    }

    /// A raw request: `headers` exactly as given (nothing added but `Content-Length` and
    /// `Connection: close`).
    pub(crate) fn raw(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Reply, BoxError> {
        let mut stream = TcpStream::connect(self.addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(120)))?;
        let mut head = format!("{method} {target} HTTP/1.1\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(body) = body {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("Connection: close\r\n\r\n");
        stream.write_all(head.as_bytes())?;
        if let Some(body) = body {
            // A server that refuses early may close before reading everything.
            let _ = stream.write_all(body);
        }
        let mut bytes = Vec::new();
        match stream.read_to_end(&mut bytes) {
            Ok(_) => {}
            Err(err) if !bytes.is_empty() && err.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(err) => return Err(err.into()),
        }
        parse(&bytes)
    }

    /// A request with the right `Host` and token.
    pub(crate) fn call(&self, method: &str, target: &str, body: Option<&Value>) -> Result<Reply, BoxError> {
        let host = self.host();
        let auth = format!("Bearer {}", self.token);
        let text = body.map(Value::to_string);
        let mut headers = vec![("Host", host.as_str()), ("Authorization", auth.as_str())];
        if text.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        self.raw(method, target, &headers, text.as_deref().map(str::as_bytes))
    }

    /// `GET` with the right `Host` and token.
    pub(crate) fn get(&self, target: &str) -> Result<Reply, BoxError> {
        self.call("GET", target, None)
    }

    /// Send SIGTERM and wait for the exit status.
    pub(crate) fn terminate(mut self) -> Result<Option<i32>, BoxError> {
        let status = std::process::Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status()?;
        if !status.success() {
            return Err("kill -TERM failed".into());
        }
        for _ in 0..600 {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status.code());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err("serve did not stop within 30 s of SIGTERM".into())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Parse an HTTP/1.1 response (plain or chunked body).
pub(crate) fn parse(bytes: &[u8]) -> Result<Reply, BoxError> {
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").ok_or("no end of headers")?;
    let head = std::str::from_utf8(&bytes[..split])?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or("no status line")?;
    let status: u16 = status_line.split(' ').nth(1).ok_or("no status")?.parse()?;
    let mut headers = BTreeMap::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let raw = &bytes[split + 4..];
    let body = if headers.get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        dechunk(raw)?
    } else {
        raw.to_vec()
    };
    Ok(Reply { status, headers, body })
}

fn dechunk(mut raw: &[u8]) -> Result<Vec<u8>, BoxError> {
    let mut out = Vec::new();
    loop {
        let end = raw.windows(2).position(|w| w == b"\r\n").ok_or("bad chunk")?;
        let size_text = std::str::from_utf8(&raw[..end])?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)?;
        raw = &raw[end + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(raw.get(..size).ok_or("short chunk")?);
        raw = raw.get(size + 2..).ok_or("short chunk")?;
    }
}

/// SHA-256 of every file under `root` (path → digest), `.scriptorium/` runtime caches
/// included only when `with_runtime`.
pub(crate) fn tree_hash(root: &Path, with_runtime: bool) -> Result<BTreeMap<String, String>, BoxError> {
    use sha2::{Digest as _, Sha256};
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            let relative = path.strip_prefix(root)?.to_string_lossy().into_owned();
            if !with_runtime && relative.starts_with(".scriptorium") {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_symlink() {
                out.insert(relative, format!("link:{}", std::fs::read_link(&path)?.display()));
            } else {
                let digest = Sha256::digest(std::fs::read(&path)?);
                out.insert(relative, digest.iter().map(|b| format!("{b:02x}")).collect());
            }
        }
    }
    Ok(out)
}
