//! `scriptorium mcp`: a Model Context Protocol server on stdin/stdout (newline-delimited
//! JSON-RPC 2.0). It keeps one warm backend for the process and offers its tools
//! (`scriptorium_backend_api::TOOLS`) and `core.md` as a resource. Stdout carries only the
//! protocol; every log line goes to stderr.
//!
//! The loop is hand-written and synchronous (docs/ARCHITECTURE.md, Decisions): backend
//! calls are blocking and one client speaks at a time, so an async runtime buys nothing.

mod protocol;

use std::io::{BufRead as _, Write as _};
use std::sync::Arc;

use scriptorium_backend_api::{MemoryBackend, Resolver, config};

use crate::Outcome;
use crate::cli::McpArgs;
use crate::error::{CliError, CliErrorCode};

/// Run `mcp` until stdin closes.
pub(crate) fn run(args: &McpArgs) -> Result<Outcome, CliError> {
    let (root, _) = crate::workspace::resolve(args.workspace.as_deref())?;
    let config_path = args.config.as_deref().map(crate::workspace::expand_home);
    let loaded = config::load(config_path.as_deref(), &|name| std::env::var(name).ok());
    for warning in &loaded.warnings {
        eprintln!("scriptorium mcp: config warning: {}", warning.message);
    }
    let sessions = args.sessions.as_deref().map(crate::workspace::expand_home);
    // Opening the backend and `initialize` can take a second on a large workspace; they
    // run on their own thread so the initialize reply never waits for them.
    let backend_root = root.clone();
    let warming = std::thread::spawn(move || {
        let backend: Arc<dyn MemoryBackend> = Resolver::new(loaded.config, backend_root.clone(), sessions).backend();
        eprintln!("scriptorium mcp: backend {} on {}", backend.name(), backend_root.display());
        backend.initialize("mcp");
        backend
    });
    let server = protocol::Server::new(warming, root);
    let result = serve(&server);
    for failure in server.backend().shutdown() {
        eprintln!("scriptorium mcp: shutdown: session {} not written: {}", failure.session_id, failure.failure.reason);
    }
    result.map(|()| Outcome::Clean)
}

/// Answer each request line until EOF; a closed stdout ends the session quietly.
fn serve(server: &protocol::Server) -> Result<(), CliError> {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let line = match line {
            Ok(line) => line,
            Err(err) => {
                // Not UTF-8 or a read failure: the JSON-RPC parse error, then keep serving.
                eprintln!("scriptorium mcp: unreadable input line: {err}");
                if err.kind() == std::io::ErrorKind::InvalidData {
                    if !write_line(&mut stdout, &protocol::parse_error())? {
                        return Ok(());
                    }
                    continue;
                }
                return Err(CliError::new(CliErrorCode::ReadFailed, format!("cannot read stdin: {err}")));
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(reply) = server.handle_line(&line)
            && !write_line(&mut stdout, &reply)?
        {
            return Ok(());
        }
    }
    Ok(())
}

/// Write one reply line; `false` when the client closed stdout.
fn write_line(stdout: &mut std::io::StdoutLock<'_>, reply: &serde_json::Value) -> Result<bool, CliError> {
    let mut text = reply.to_string();
    text.push('\n');
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(err) => Err(CliError::new(CliErrorCode::OutputFailed, format!("cannot write to stdout: {err}"))),
    }
}
