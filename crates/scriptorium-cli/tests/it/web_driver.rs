//! A small W3C WebDriver client for the browser tests: it starts Debian's `chromedriver`
//! on a free loopback port and drives headless Chromium over plain HTTP/1.1 (the
//! protocol is JSON over HTTP, so a few calls on the tests' own HTTP parser do; no
//! crate that could download a browser comes in).

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::serve_client::{BoxError, parse};

/// The key WebDriver reserves for element references.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long a test waits for the page to show something (generous: CI shares 2 cores
/// with the rest of the test run, and waiting costs time only on a failure).
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// The browser and driver, when this machine has them: `None` (after a notice) on a
/// machine without them, an error when `CI` is set, since CI installs both.
#[allow(clippy::print_stderr, reason = "a dev machine without a browser is told why the test did nothing")]
pub(crate) fn browser_or_skip() -> Result<Option<(PathBuf, PathBuf)>, BoxError> {
    let find = |var: &str, names: &[&str]| -> Option<PathBuf> {
        if let Some(path) = std::env::var_os(var) {
            return Some(PathBuf::from(path)).filter(|p| p.is_file());
        }
        let dirs = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&dirs).flat_map(|dir| names.iter().map(move |name| dir.join(name))).find(|p| p.is_file())
    };
    let chromium = find("CHROMIUM", &["chromium", "chromium-browser", "google-chrome"]);
    let driver = find("CHROMEDRIVER", &["chromedriver"]);
    match (chromium, driver) {
        (Some(chromium), Some(driver)) => Ok(Some((chromium, driver))),
        _ if std::env::var_os("CI").is_some() => {
            Err("CI is set but chromium and chromedriver are missing (.ci/run installs them with apt-get)".into())
        }
        _ => {
            eprintln!(
                "notice: chromium or chromedriver not found; the browser test did not run (set CI to make this fail)"
            );
            Ok(None)
        }
    }
}

/// A running chromedriver with one headless Chromium session.
pub(crate) struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    _profile: crate::TempDir,
}

/// An element reference of the session.
#[derive(Clone, Debug)]
pub(crate) struct Element(String);

impl Browser {
    /// Start the driver and one headless browser session.
    pub(crate) fn launch(chromium: &Path, driver: &Path) -> Result<Browser, BoxError> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let profile = crate::TempDir::new()?;
        let mut browser = Browser {
            driver: child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            session: String::new(),
            _profile: profile,
        };
        let start = Instant::now();
        while browser.call("GET", "/status", None).map(|v| v["ready"] != true).unwrap_or(true) {
            if start.elapsed() > PATIENCE {
                return Err("chromedriver did not become ready".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium.display().to_string(),
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1400,1000", "--no-first-run", "--disable-extensions",
                    format!("--user-data-dir={}", browser._profile.path().display()),
                ],
            },
        }}});
        let session = browser.call("POST", "/session", Some(&capabilities))?;
        browser.session = session["sessionId"].as_str().ok_or_else(|| format!("no session: {session}"))?.to_owned();
        Ok(browser)
    }

    /// One WebDriver command; its `value`, or the driver's error as an error.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, BoxError> {
        let mut stream = TcpStream::connect(self.addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(120)))?;
        let text = body.map(Value::to_string).unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.addr,
            text.len()
        );
        stream.write_all(head.as_bytes())?;
        stream.write_all(text.as_bytes())?;
        let reply = parse(&read_reply(&mut stream)?)?;
        let value = reply.json()["value"].clone();
        if reply.status != 200 {
            return Err(format!("{method} {path}: {} {}", reply.status, value).into());
        }
        Ok(value)
    }

    fn session_call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, BoxError> {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    /// Open `url` and wait for it to load.
    pub(crate) fn goto(&self, url: &str) -> Result<(), BoxError> {
        self.session_call("POST", "/url", Some(&json!({"url": url}))).map(drop)
    }

    /// The address the browser shows.
    pub(crate) fn url(&self) -> Result<String, BoxError> {
        Ok(self.session_call("GET", "/url", None)?.as_str().unwrap_or("").to_owned())
    }

    /// Every element matching the CSS `selector` now.
    pub(crate) fn all(&self, selector: &str) -> Result<Vec<Element>, BoxError> {
        let found =
            self.session_call("POST", "/elements", Some(&json!({"using": "css selector", "value": selector})))?;
        Ok(found
            .as_array()
            .map(|items| {
                items.iter().filter_map(|item| item[ELEMENT_KEY].as_str()).map(|id| Element(id.to_owned())).collect()
            })
            .unwrap_or_default())
    }

    /// Wait until `selector` matches at least `count` elements; return them.
    pub(crate) fn wait_all(&self, selector: &str, count: usize) -> Result<Vec<Element>, BoxError> {
        let start = Instant::now();
        loop {
            let found = self.all(selector)?;
            if found.len() >= count {
                return Ok(found);
            }
            if start.elapsed() > PATIENCE {
                return Err(format!(
                    "{selector}: {} element(s), wanted {count}; page: {}",
                    found.len(),
                    self.page_text()
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Wait for the first element matching `selector`.
    pub(crate) fn wait(&self, selector: &str) -> Result<Element, BoxError> {
        self.wait_all(selector, 1)?.into_iter().next().ok_or_else(|| "no element".into())
    }

    /// Wait until the text of `selector` contains `needle`; return the text.
    pub(crate) fn wait_text(&self, selector: &str, needle: &str) -> Result<String, BoxError> {
        let start = Instant::now();
        loop {
            if let Some(element) = self.all(selector)?.into_iter().next() {
                let text = self.text(&element)?;
                if text.contains(needle) {
                    return Ok(text);
                }
                if start.elapsed() > PATIENCE {
                    return Err(format!("{selector}: {text:?} does not contain {needle:?}").into());
                }
            } else if start.elapsed() > PATIENCE {
                return Err(format!("{selector}: no element; page: {}", self.page_text()).into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The rendered text of the whole page (for failure messages).
    fn page_text(&self) -> String {
        self.all("body")
            .ok()
            .and_then(|body| body.into_iter().next())
            .and_then(|body| self.text(&body).ok())
            .unwrap_or_default()
    }

    /// The rendered text of `element`.
    pub(crate) fn text(&self, element: &Element) -> Result<String, BoxError> {
        Ok(self.session_call("GET", &format!("/element/{}/text", element.0), None)?.as_str().unwrap_or("").to_owned())
    }

    /// An attribute of `element`.
    pub(crate) fn attribute(&self, element: &Element, name: &str) -> Result<Option<String>, BoxError> {
        Ok(self
            .session_call("GET", &format!("/element/{}/attribute/{name}", element.0), None)?
            .as_str()
            .map(str::to_owned))
    }

    /// The current `value` property of a form field.
    pub(crate) fn value(&self, element: &Element) -> Result<String, BoxError> {
        Ok(self
            .session_call("GET", &format!("/element/{}/property/value", element.0), None)?
            .as_str()
            .unwrap_or("")
            .to_owned())
    }

    /// Click `element`, as a person would.
    pub(crate) fn click(&self, element: &Element) -> Result<(), BoxError> {
        self.session_call("POST", &format!("/element/{}/click", element.0), Some(&json!({}))).map(drop)
    }

    /// Empty a form field.
    pub(crate) fn clear(&self, element: &Element) -> Result<(), BoxError> {
        self.session_call("POST", &format!("/element/{}/clear", element.0), Some(&json!({}))).map(drop)
    }

    /// Type `text` into `element` (key by key, as the keyboard would).
    pub(crate) fn type_text(&self, element: &Element, text: &str) -> Result<(), BoxError> {
        self.session_call("POST", &format!("/element/{}/value", element.0), Some(&json!({"text": text}))).map(drop)
    }

    /// Save a PNG of the window as `dir/name.png`; return its bytes.
    pub(crate) fn screenshot(&self, dir: &Path, name: &str) -> Result<Vec<u8>, BoxError> {
        let encoded = self.session_call("GET", "/screenshot", None)?;
        let png = base64::engine::general_purpose::STANDARD.decode(encoded.as_str().ok_or("screenshot")?)?;
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join(format!("{name}.png")), &png)?;
        Ok(png)
    }
}

/// One answer's bytes: chromedriver keeps the socket open after it, so read the head,
/// then exactly `Content-Length` bytes of body.
fn read_reply(stream: &mut TcpStream) -> Result<Vec<u8>, BoxError> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse::<usize>().ok());
            if let Some(length) = length
                && bytes.len() >= end + 4 + length
            {
                bytes.truncate(end + 4 + length);
                return Ok(bytes);
            }
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(bytes);
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.session_call("DELETE", "", None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
