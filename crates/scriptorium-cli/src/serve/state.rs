//! What every handler shares: the one warm backend, the workspace root, the token and
//! the bound address; and `blocking`, the one way a handler calls the synchronous layers.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use scriptorium_backend_api::config::MemoryConfig;
use scriptorium_backend_api::layers::writer_runtime::{SESSIONS_FILE, SqliteStore};
use scriptorium_backend_api::{LocalBackend, MemoryBackend};

use super::error::ApiError;

/// The server's shared state.
pub(crate) struct State {
    /// The one backend of this process (`NullBackend` when memory is disabled).
    pub(crate) backend: Arc<dyn MemoryBackend>,
    /// The same backend when it is the local one (`None`: memory is disabled).
    pub(crate) local: Option<Arc<LocalBackend>>,
    /// The workspace root.
    pub(crate) root: PathBuf,
    /// The session store's file.
    pub(crate) sessions: PathBuf,
    /// The settings the server started with.
    pub(crate) config: MemoryConfig,
    /// The bearer token (`None` when memory is disabled: nothing to protect).
    pub(crate) token: Option<String>,
    /// The address the server is bound to (its port is part of every allowed `Host`).
    pub(crate) bound: SocketAddr,
    /// The session store the messages route appends to, opened on first use.
    store: Mutex<Option<Arc<SqliteStore>>>,
    /// Numbers requests, for the origin id of tool calls.
    counter: AtomicU64,
    /// The page's search index.
    pub(crate) search: super::routes_search::SearchIndex,
}

impl State {
    /// The state of a server on `bound`.
    pub(crate) fn new(
        backend: Arc<dyn MemoryBackend>,
        local: Option<Arc<LocalBackend>>,
        root: PathBuf,
        sessions: Option<PathBuf>,
        config: MemoryConfig,
        token: Option<String>,
        bound: SocketAddr,
    ) -> Self {
        let sessions = sessions.unwrap_or_else(|| root.parent().unwrap_or(&root).join(SESSIONS_FILE));
        State {
            backend,
            local,
            root,
            sessions,
            config,
            token,
            bound,
            store: Mutex::new(None),
            counter: AtomicU64::new(0),
            search: super::routes_search::SearchIndex::default(),
        }
    }

    /// A new origin id `http/<n>` for a tool call.
    pub(crate) fn origin(&self) -> String {
        format!("http/{}", self.counter.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// The session store, opened once.
    pub(crate) fn store(&self) -> Result<Arc<SqliteStore>, ApiError> {
        let mut slot = self.store.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(store) = slot.as_ref() {
            return Ok(Arc::clone(store));
        }
        let store = Arc::new(SqliteStore::open(&self.sessions).map_err(|error| {
            ApiError::detail(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                error.code().as_str(),
                format!("the session store cannot open: {}", error.message()),
            )
        })?);
        *slot = Some(Arc::clone(&store));
        Ok(store)
    }
}

/// Run the synchronous `work` on the blocking pool; a panic inside becomes a 500.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.map_err(|_| ApiError::internal("the request's work stopped unexpectedly"))
}
