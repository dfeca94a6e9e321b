//! The `memory.*` configuration (spec 02 §11) plus the writer's model and base URL: a TOML
//! file with `SCRIPTORIUM_…` environment overrides. Bad input never fails a load: an
//! invalid value falls back with a warning naming its key, an unknown key is reported.

mod read;

pub use self::read::{CONFIG_ENV, default_config_path, load, parse};

/// Which backend `memory.backend` selects (applies at next start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendKind {
    /// The shipped local backend.
    #[default]
    Local,
    /// Memory disabled: the null backend.
    None,
}

/// `memory.retrieval.method`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RetrievalMethod {
    /// No automatic recall; the model uses the tools.
    Agent,
    /// BM25+ (the default).
    #[default]
    Bm25,
    /// Embedding similarity.
    Embedding,
    /// BM25 and embedding fused.
    Hybrid,
}

impl RetrievalMethod {
    /// The configuration spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            RetrievalMethod::Agent => "agent",
            RetrievalMethod::Bm25 => "bm25",
            RetrievalMethod::Embedding => "embedding",
            RetrievalMethod::Hybrid => "hybrid",
        }
    }
}

/// Every setting, each at its default unless configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryConfig {
    /// `memory.backend`.
    pub backend: BackendKind,
    /// `memory.writer.model`: `provider/model`, empty for none.
    pub writer_model: String,
    /// `memory.writer.base_url`: the model server's API root, empty for the provider's.
    pub writer_base_url: String,
    /// `memory.writer.enabled`.
    pub writer_enabled: bool,
    /// `memory.writer.trigger_tokens`: 8000, 16000 or 32000.
    pub trigger_tokens: usize,
    /// `memory.retrieval.method`.
    pub retrieval_method: RetrievalMethod,
    /// `memory.retrieval.top_k`: 1..=10, automatic recall only.
    pub top_k: usize,
    /// `memory.retrieval.include_sources`.
    pub include_sources: bool,
    /// `memory.core.inject`.
    pub core_inject: bool,
    /// `memory.recent.limit`: 1..=500.
    pub recent_limit: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            backend: BackendKind::Local,
            writer_model: String::new(),
            writer_base_url: String::new(),
            writer_enabled: true,
            trigger_tokens: scriptorium_writer_runtime::DEFAULT_TRIGGER_TOKENS,
            retrieval_method: RetrievalMethod::Bm25,
            top_k: 5,
            include_sources: true,
            core_inject: true,
            recent_limit: scriptorium_derived_views::RECENT_LIMIT,
        }
    }
}

/// What kind of problem a configuration warning reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarningKind {
    /// A known key has a value outside its type or range; the default (or the file's
    /// value, for an environment override) is used.
    InvalidValue,
    /// A key this build does not know; ignored.
    UnknownKey,
    /// The file exists but cannot be read or is not TOML; every key is at its default.
    UnreadableFile,
}

impl WarningKind {
    /// The stable code of the warning.
    pub const fn code(self) -> &'static str {
        match self {
            WarningKind::InvalidValue => "BACKEND_CONFIG_INVALID_VALUE",
            WarningKind::UnknownKey => "BACKEND_CONFIG_UNKNOWN_KEY",
            WarningKind::UnreadableFile => "BACKEND_CONFIG_UNREADABLE",
        }
    }
}

/// One problem found while loading; never fatal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    /// What went wrong.
    pub kind: WarningKind,
    /// The dotted key (`memory.retrieval.top_k`) or environment variable it concerns, or
    /// the file path for [`WarningKind::UnreadableFile`].
    pub key: String,
    /// A message for people.
    pub message: String,
}

/// A loaded configuration, where it came from and what was wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedConfig {
    /// The settings.
    pub config: MemoryConfig,
    /// The file read, if one existed.
    pub path: Option<std::path::PathBuf>,
    /// Every problem, in the order found.
    pub warnings: Vec<ConfigWarning>,
}

#[cfg(test)]
mod tests;
