//! `scriptorium serve`: the memory over HTTP (spec 02 §8.4 and the backend contract for
//! agent runtimes), on loopback, behind a bearer token, with one warm backend.
//!
//! axum and tokio live here only: the layers below are synchronous, so every call into
//! them runs on tokio's blocking pool (`state::blocking`). One file per job: the guard
//! (`Host`/`Origin`), the token (`auth`), the error body (`error`), the JSON body
//! (`body`), path parameters (`paths`), owner edits (`hand_edit`), the route groups, the
//! router table (`router`), the OpenAPI document (`openapi`) and the page (`web`).

mod auth;
mod body;
mod disabled;
mod error;
mod guard;
mod hand_edit;
mod openapi;
mod paths;
mod router;
mod routes_contract;
mod routes_evidence;
mod routes_history;
mod routes_memory;
mod routes_search;
mod routes_topics;
mod state;
mod token;
mod web;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use scriptorium_backend_api::config::{self, BackendKind};
use scriptorium_backend_api::{LocalBackend, MemoryBackend, NullBackend};

use crate::Outcome;
use crate::error::{CliError, CliErrorCode};

/// The default request body cap: 1 MiB.
const DEFAULT_MAX_BODY: usize = 1 << 20;

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The workspace root (default as for `check`; created when the backend first opens it).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// The session store (default: `sessions.sqlite3` beside the workspace directory).
    #[arg(long, value_name = "FILE")]
    pub(crate) sessions: Option<PathBuf>,
    /// The configuration file (default `$SCRIPTORIUM_CONFIG`, else the user's config.toml).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// The address to listen on; port 0 picks a free one (printed on stderr).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:7438")]
    pub(crate) addr: SocketAddr,
    /// Allow an address other than loopback (anyone who can reach it and holds the token
    /// can read and change memory).
    #[arg(long)]
    pub(crate) allow_non_loopback: bool,
    /// The largest request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY)]
    pub(crate) max_body: usize,
    /// Print the page's address with the token (`http://…/?token=…`) on stdout.
    #[arg(long)]
    pub(crate) print_token: bool,
}

/// Run `serve` until SIGINT or SIGTERM.
pub(crate) fn run(args: &ServeArgs) -> Result<Outcome, CliError> {
    if !args.addr.ip().is_loopback() {
        if !args.allow_non_loopback {
            return Err(CliError::new(
                CliErrorCode::Usage,
                format!("{} is not a loopback address: pass --allow-non-loopback to serve it", args.addr),
            ));
        }
        eprintln!(
            "scriptorium serve: warning: listening on {}, not loopback: anyone who reaches it with the token can read and change memory",
            args.addr
        );
    }
    let (root, _) = crate::workspace::resolve(args.workspace.as_deref())?;
    // Absolute, so `workspace_path` means the same to every client.
    let root = std::path::absolute(&root).unwrap_or(root);
    let config_path = args.config.as_deref().map(crate::workspace::expand_home);
    let loaded = config::load(config_path.as_deref(), &|name| std::env::var(name).ok());
    for warning in &loaded.warnings {
        eprintln!("scriptorium serve: config warning: {}", warning.message);
    }
    let sessions = args.sessions.as_deref().map(crate::workspace::expand_home);
    let settings = loaded.config;
    let (backend, local): (Arc<dyn MemoryBackend>, Option<Arc<LocalBackend>>) = match settings.backend {
        BackendKind::None => (Arc::new(NullBackend), None),
        BackendKind::Local => {
            let local = Arc::new(LocalBackend::new(root.clone(), sessions.clone(), settings.clone()));
            (local.clone(), Some(local))
        }
    };
    // Warm before listening, so the first request pays nothing; a disabled backend
    // creates nothing, so it gets no token either (every route answers 503).
    let token = match &local {
        Some(local) => {
            local.initialize("http");
            let kept = token::keep(&root).map_err(|message| CliError::new(CliErrorCode::HttpServeFailed, message))?;
            eprintln!("scriptorium serve: the bearer token is in {}", kept.path.display());
            Some(kept.token)
        }
        None => {
            eprintln!("scriptorium serve: memory is disabled by memory.backend=none: every route answers 503");
            None
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|err| CliError::new(CliErrorCode::HttpServeFailed, format!("cannot start the runtime: {err}")))?;
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr).await.map_err(|err| {
            CliError::new(CliErrorCode::HttpServeFailed, format!("cannot listen on {}: {err}", args.addr))
        })?;
        let bound = listener
            .local_addr()
            .map_err(|err| CliError::new(CliErrorCode::HttpServeFailed, format!("no local address: {err}")))?;
        let state = state::State::new(backend.clone(), local, root.clone(), sessions, settings, token, bound);
        if args.print_token
            && let Some(token) = &state.token
        {
            println!("http://{bound}/?token={token}");
        }
        eprintln!("scriptorium serve: listening on http://{bound}");
        let app = router::app(Arc::new(state), args.max_body);
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown_signal())
            .await
            .map_err(|err| CliError::new(CliErrorCode::HttpServeFailed, format!("the server failed: {err}")))
    });
    // Requests have drained: force-write what the sessions still owe.
    for failure in backend.shutdown() {
        eprintln!(
            "scriptorium serve: shutdown: session {} not written: {}",
            failure.session_id, failure.failure.reason
        );
    }
    eprintln!("scriptorium serve: stopped");
    result.map(|()| Outcome::Clean)
}

/// Resolves at the first SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
