//! The resolver (spec 02 §1.2): builds the configured backend once and caches it; a setter
//! injects another implementation (tests, embedding programs) or resets to the default.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::backend::MemoryBackend;
use crate::config::{BackendKind, MemoryConfig};
use crate::local::LocalBackend;
use crate::null::NullBackend;

/// Hands out "the backend": the agent runtime never names an implementation.
pub struct Resolver {
    config: MemoryConfig,
    workspace: PathBuf,
    sessions: Option<PathBuf>,
    cached: Mutex<Option<Arc<dyn MemoryBackend>>>,
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver").field("workspace", &self.workspace).field("config", &self.config).finish()
    }
}

impl Resolver {
    /// A resolver that builds the backend `config.backend` selects for the workspace at
    /// `workspace` (and the session store at `sessions`, default beside it). Building
    /// touches no file.
    pub fn new(config: MemoryConfig, workspace: impl Into<PathBuf>, sessions: Option<PathBuf>) -> Self {
        Resolver { config, workspace: workspace.into(), sessions, cached: Mutex::new(None) }
    }

    /// The backend: the injected one, else the configured one, built on first use.
    pub fn backend(&self) -> Arc<dyn MemoryBackend> {
        let mut cached = self.cached.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(backend) = cached.as_ref() {
            return Arc::clone(backend);
        }
        let backend: Arc<dyn MemoryBackend> = match self.config.backend {
            BackendKind::Local => {
                Arc::new(LocalBackend::new(self.workspace.clone(), self.sessions.clone(), self.config.clone()))
            }
            BackendKind::None => Arc::new(NullBackend),
        };
        *cached = Some(Arc::clone(&backend));
        backend
    }

    /// Inject `backend`, or with `None` drop the cached one so the next call builds the
    /// configured backend again.
    pub fn set_backend(&self, backend: Option<Arc<dyn MemoryBackend>>) {
        *self.cached.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = backend;
    }

    /// Whether memory is enabled by configuration (`memory.backend` is not `none`).
    pub fn is_enabled(&self) -> bool {
        self.config.backend != BackendKind::None
    }
}
