//! The writer agent the configuration names: the model client, or an agent that reports
//! why there is none, so a due write fails with `WRITER_PRECONDITION_FAILED`.

use std::sync::Arc;

use scriptorium_writer_runtime::llm::{ClientConfig, LlmClient, ModelSpec};
use scriptorium_writer_runtime::{
    AgentError, AgentErrorKind, ModelWriter, WriterAgent, WriterReport, WriterStage, WriterTask,
};

/// A writer that cannot run; its reason never holds a key.
struct NoWriter(String);

impl WriterAgent for NoWriter {
    fn run(&self, _task: &WriterTask<'_>, _stage: &mut WriterStage<'_>) -> Result<WriterReport, AgentError> {
        Err(AgentError::new(AgentErrorKind::Precondition, self.0.clone()))
    }
}

/// The environment the model client reads its key from (`OPENAI_API_KEY`, …).
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.trim().is_empty())
}

/// The writer for `model` (`provider/model`) at `base_url` (empty: the provider's).
pub(super) fn agent(model: &str, base_url: &str) -> Arc<dyn WriterAgent> {
    if model.trim().is_empty() {
        return Arc::new(NoWriter("no writer model is configured (memory.writer.model)".to_owned()));
    }
    let base_url = Some(base_url).filter(|url| !url.trim().is_empty());
    let key = env("SCRIPTORIUM_WRITER_API_KEY");
    match ModelSpec::parse(model).and_then(|spec| ClientConfig::resolve(spec, base_url, key.as_deref(), &env)) {
        Ok(config) => Arc::new(ModelWriter::new(LlmClient::new(config))),
        Err(error) => Arc::new(NoWriter(error.to_string())),
    }
}
