//! The writer model of the writer verbs (`write`, `sleep`, `backfill`, `promote`):
//! `--model provider/model` or `SCRIPTORIUM_WRITER_MODEL`, an optional base URL
//! (`--base-url` or `SCRIPTORIUM_WRITER_BASE_URL`, needed by `openai-compatible/…`), and
//! the key from the provider's variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) or
//! `SCRIPTORIUM_WRITER_API_KEY`. The key is never printed: errors name the variable.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use scriptorium_backend_api::layers::writer_runtime::llm::{ClientConfig, LlmClient, ModelSpec};
use scriptorium_backend_api::layers::writer_runtime::{
    ModelWriter, Runtime, RuntimeConfig, SqliteStore, SystemClock, WriterAgent,
};

/// The environment variable naming the writer model.
pub(crate) const MODEL_ENV: &str = "SCRIPTORIUM_WRITER_MODEL";
/// The environment variable naming the model server's API root.
pub(crate) const BASE_URL_ENV: &str = "SCRIPTORIUM_WRITER_BASE_URL";
/// The environment variable holding a key for the configured model (any provider).
pub(crate) const API_KEY_ENV: &str = "SCRIPTORIUM_WRITER_API_KEY";

/// The writer model options every writer verb takes.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct ModelArgs {
    /// The writer model, `provider/model` (`openai/gpt-4.1-mini`, `anthropic/claude-sonnet-4-5`,
    /// `openai-compatible/<name>` with --base-url); default: $SCRIPTORIUM_WRITER_MODEL.
    #[arg(long, value_name = "PROVIDER/MODEL")]
    pub(crate) model: Option<String>,
    /// The model server's API root (default: the provider's; $SCRIPTORIUM_WRITER_BASE_URL).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
}

/// Why no writer could be built: a stable code and a message without any key.
#[derive(Debug)]
pub(crate) struct NoWriter {
    pub(crate) code: String,
    pub(crate) message: String,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.trim().is_empty())
}

/// The writer agent the options and the environment configure.
pub(crate) fn writer(args: &ModelArgs) -> Result<ModelWriter, NoWriter> {
    let Some(model) = args.model.clone().or_else(|| env(MODEL_ENV)) else {
        return Err(NoWriter {
            code: "WRITER_PRECONDITION_FAILED".to_owned(),
            message: format!("no writer model is configured: pass --model provider/model or set {MODEL_ENV}"),
        });
    };
    let config_error = |error: scriptorium_backend_api::layers::writer_runtime::llm::ConfigError| NoWriter {
        code: error.code().as_str().to_owned(),
        message: error.to_string(),
    };
    let spec = ModelSpec::parse(&model).map_err(config_error)?;
    let base_url = args.base_url.clone().or_else(|| env(BASE_URL_ENV));
    let key = env(API_KEY_ENV);
    let config = ClientConfig::resolve(spec, base_url.as_deref(), key.as_deref(), &env).map_err(config_error)?;
    Ok(ModelWriter::new(LlmClient::new(config)))
}

/// A runtime over the workspace at `root`, the session store at `sessions` (created when
/// missing) and `writer`.
pub(crate) fn runtime(
    root: &std::path::Path,
    sessions: PathBuf,
    writer: Arc<dyn WriterAgent>,
) -> Result<Runtime, NoWriter> {
    let fail = |code: &str, message: String| NoWriter { code: code.to_owned(), message };
    let workspace = scriptorium_backend_api::layers::transaction::Workspace::open(root)
        .map_err(|error| fail(error.code().as_str(), error.message().to_owned()))?;
    let store = SqliteStore::open(&sessions)
        .map_err(|error| fail(error.code().as_str(), format!("{}: {}", sessions.display(), error.message())))?;
    Ok(Runtime::new(workspace, Arc::new(store), writer, Arc::new(SystemClock), RuntimeConfig::default()))
}
