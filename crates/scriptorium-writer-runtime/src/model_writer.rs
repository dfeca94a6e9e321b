//! [`ModelWriter`]: the real [`WriterAgent`] (spec 02 §10). A model with the seven stage
//! tools edits a private [`Stage`]; when it ends its turn the stage's diff is committed
//! through the [`WriterStage`] (the transaction's validation, the batch as evidence). A
//! rejected commit gets exactly one repair run, told what was rejected; a second
//! rejection is `COMMIT_REJECTED`. Every run appends its trajectory to
//! `agent-history.jsonl`, with the API key redacted.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::agent::{AgentError, AgentErrorKind, StageKind, Usage, WriterAgent, WriterReport, WriterStage, WriterTask};
use crate::llm::{ChatModel, ChatRequest, LlmClient, Message, StopReason, ToolArguments, ToolDefinition, ToolResult};
use crate::prompt::{SYSTEM_CONTRACT, StageName, organize_task, repair_task, write_task};
use crate::stage::{Stage, tool_definitions};
use crate::trajectory::{Trajectory, TurnRecord, append_trajectory};

/// The most model rounds one run takes (spec 02 §10.1).
pub const MAX_ITERATIONS: u32 = 20;

/// The writer agent over a chat model.
pub struct ModelWriter {
    model: Arc<dyn ChatModel>,
    secrets: Vec<String>,
    max_iterations: u32,
}

impl std::fmt::Debug for ModelWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelWriter").field("max_iterations", &self.max_iterations).finish_non_exhaustive()
    }
}

impl ModelWriter {
    /// A writer over `client`; its API key is redacted from every trajectory.
    pub fn new(client: LlmClient) -> Self {
        let secrets = client.config().api_key.iter().map(|key| key.expose().to_owned()).collect();
        ModelWriter { model: Arc::new(client), secrets, max_iterations: MAX_ITERATIONS }
    }

    /// A writer over any chat model, redacting `secrets` from its trajectories.
    pub fn with_model(model: Arc<dyn ChatModel>, secrets: Vec<String>) -> Self {
        ModelWriter { model, secrets, max_iterations: MAX_ITERATIONS }
    }

    /// One conversation on `files`: rounds of model calls and tool results until the
    /// model ends its turn or the round limit. The trajectory is filled as it goes.
    fn converse(
        &self,
        prompt: &str,
        files: &mut Stage,
        tools: &[ToolDefinition],
        run: &mut Trajectory,
        usage: &mut Usage,
    ) -> Result<(), AgentError> {
        let mut messages = vec![Message::System(SYSTEM_CONTRACT.to_owned()), Message::User(prompt.to_owned())];
        for round in 1..=self.max_iterations {
            run.rounds = round;
            let request = ChatRequest { messages: messages.clone(), tools: tools.to_vec(), max_output_tokens: None };
            let response = self.model.complete(&request)?;
            usage.input_tokens += response.usage.input_tokens;
            usage.output_tokens += response.usage.output_tokens;
            run.input_tokens += response.usage.input_tokens;
            run.output_tokens += response.usage.output_tokens;
            run.stop_reason =
                response.provider_stop_reason.clone().unwrap_or_else(|| format!("{:?}", response.stop_reason));
            if let Some(reason) = response.stop_reason.failure() {
                let mut error =
                    AgentError::new(AgentErrorKind::Execution, format!("the model stopped: {}", run.stop_reason));
                error.provider_reason = Some(reason);
                error.retryable = Some(false);
                return Err(error);
            }
            run.reply = response.text.clone();
            messages.push(response.to_message());
            if response.tool_calls.is_empty() {
                if response.stop_reason == StopReason::PauseTurn {
                    continue;
                }
                return Ok(());
            }
            for call in &response.tool_calls {
                let (outcome, arguments) = match &call.arguments {
                    ToolArguments::Parsed(value) => (files.execute(&call.name, value), value.clone()),
                    ToolArguments::Malformed { raw, .. } => {
                        (files.execute_json(&call.name, raw), Value::from(raw.as_str()))
                    }
                };
                run.turns.push(TurnRecord {
                    round,
                    tool: call.name.clone(),
                    arguments,
                    status: if outcome.is_error { "error" } else { "ok" }.to_owned(),
                    output: outcome.content.clone(),
                    topic_paths: None,
                });
                messages.push(Message::ToolResult(ToolResult {
                    call_id: call.id.clone(),
                    content: outcome.content,
                    is_error: outcome.is_error,
                }));
            }
        }
        run.stop_reason = "max_iterations".to_owned();
        Ok(())
    }

    /// One run (the first or the repair) on `files`, then the commit of what it left.
    /// `Ok(Err(rejection))` when the commit was rejected.
    fn attempt(
        &self,
        stage_name: &str,
        prompt: &str,
        files: &mut Stage,
        stage: &mut WriterStage<'_>,
        usage: &mut Usage,
    ) -> Result<Result<(), String>, AgentError> {
        let tools = tool_definitions()
            .into_iter()
            .map(|tool| ToolDefinition {
                name: tool.name.to_owned(),
                description: tool.description,
                parameters: tool.parameters,
            })
            .collect::<Vec<_>>();
        let mut run = Trajectory {
            stage: stage_name.to_owned(),
            system_prompt: SYSTEM_CONTRACT.to_owned(),
            prompt: prompt.to_owned(),
            ..Trajectory::default()
        };
        let conversed = self.converse(prompt, files, &tools, &mut run, usage);
        let outcome = match conversed {
            Err(error) => {
                run.error = Some(error.message.clone());
                Err(error)
            }
            Ok(()) => self.commit(files, stage, &mut run),
        };
        run.turns.push(TurnRecord {
            round: run.rounds,
            tool: "agent".to_owned(),
            arguments: json!({"input_tokens": run.input_tokens, "output_tokens": run.output_tokens}),
            status: if outcome.as_ref().is_ok_and(Result::is_ok) { "ok" } else { "error" }.to_owned(),
            output: String::new(),
            topic_paths: None,
        });
        let secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
        // The history is not memory: a full disk must not fail the write.
        let _ = append_trajectory(&stage.workspace().runtime_dir(), &run, &secrets);
        outcome
    }

    /// Commit the stage's diff; `Ok(Err(text))` when the transaction refused it. Either
    /// way the stage then shows the committed tree again (the repair round starts from
    /// the rolled-back workspace, spec 02 §10.3).
    fn commit(
        &self,
        files: &mut Stage,
        stage: &mut WriterStage<'_>,
        run: &mut Trajectory,
    ) -> Result<Result<(), String>, AgentError> {
        let paths = files.changed_paths().map_err(stage_error)?;
        let result = stage.commit_stage(files);
        let (status, output) = match &result {
            Ok(_) => ("ok", String::new()),
            Err(error) => ("error", error.to_string()),
        };
        if !paths.is_empty() || result.is_err() {
            run.turns.push(TurnRecord {
                round: run.rounds,
                tool: "commit".to_owned(),
                arguments: Value::Null,
                status: status.to_owned(),
                output: output.clone(),
                topic_paths: Some(paths),
            });
        }
        match result {
            // Nothing differed: the stage is the committed tree already.
            Ok(None) => Ok(Ok(())),
            Ok(Some(installed)) => {
                files.refresh_at(stage.workspace(), installed.revision).map_err(stage_error)?;
                Ok(Ok(()))
            }
            Err(_) => {
                let base = files.revision().to_owned();
                files.refresh_at(stage.workspace(), base).map_err(stage_error)?;
                Ok(Err(output))
            }
        }
    }
}

/// A stage that cannot be made, read or refreshed: an I/O failure of the run.
fn stage_error(error: scriptorium_transaction::Error) -> AgentError {
    AgentError::new(AgentErrorKind::Other, error.to_string())
}

impl WriterAgent for ModelWriter {
    fn run(&self, task: &WriterTask<'_>, stage: &mut WriterStage<'_>) -> Result<WriterReport, AgentError> {
        let stage_error =
            |error: scriptorium_transaction::Error| AgentError::new(AgentErrorKind::Other, error.to_string());
        let mut files = Stage::new(stage.workspace()).map_err(stage_error)?;
        let listing = files.structure_listing().map_err(stage_error)?;
        let (name, prompt) = match task.kind {
            StageKind::Organize => {
                let topics: Vec<String> =
                    files.files().into_iter().filter(|path| path.starts_with("topics/")).collect();
                (StageName::Organize, organize_task(&topics, &listing))
            }
            StageKind::Write => (StageName::Write, write_task(&task.observed, &listing)),
            StageKind::Backfill => (StageName::Backfill, write_task(&task.observed, &listing)),
            StageKind::Promote => (StageName::Promote, write_task(&task.observed, &listing)),
        };
        let mut usage = Usage::default();
        let Err(rejection) = self.attempt(name.as_str(false), &prompt, &mut files, stage, &mut usage)? else {
            return Ok(WriterReport { usage });
        };
        let repair = repair_task(&prompt, &rejection);
        match self.attempt(name.as_str(true), &repair, &mut files, stage, &mut usage)? {
            Ok(()) => Ok(WriterReport { usage }),
            Err(second) => {
                let mut error = AgentError::new(
                    AgentErrorKind::Execution,
                    format!("the writer's edits were rejected twice: {second}"),
                );
                error.commit_rejected = true;
                Err(error)
            }
        }
    }
}
