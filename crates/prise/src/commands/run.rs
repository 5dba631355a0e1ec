//! `prise run`: one question to the agent, the answer on stdout.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use prise_agent::{Agent, AgentError, AgentEvent, AgentOptions};
use prise_llm::{ModelError, ModelSpec, OpenAiCompatible, Provider};

use crate::cli::RunArgs;
use crate::commands::{config, mounted};
use crate::failure::Failure;
use crate::output;

/// Mounts the servers, asks the model, prints the final answer. The tool trace goes to
/// stderr when it is a terminal.
pub async fn run(config: Option<&Path>, roots: &[PathBuf], args: RunArgs) -> Result<(), Failure> {
    let spec: ModelSpec = args
        .model
        .parse()
        .map_err(|e: String| Failure::usage(e, None))?;
    if spec.provider == Provider::Anthropic {
        return Err(Failure::usage(
            "the native Anthropic provider is not in this build yet",
            "use an OpenAI-compatible endpoint for now".to_owned(),
        ));
    }
    let endpoint = spec
        .endpoint(args.base_url.as_deref(), args.api_key.as_deref(), &|name| {
            std::env::var(name).ok()
        })
        .map_err(|e| Failure::usage(e, None))?;
    let model = OpenAiCompatible::new(endpoint, spec.model.clone()).map_err(model_failure)?;
    let prompt = match args.prompt {
        Some(prompt) => prompt,
        None => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            text
        }
    };
    if prompt.trim().is_empty() {
        return Err(Failure::usage(
            "the prompt is empty",
            "pass -p \"question\" or pipe it on stdin".to_owned(),
        ));
    }
    let config = config::load(config)?;
    let approval = config
        .as_ref()
        .map(|c| c.approval.clone())
        .unwrap_or_default();
    let mounts = Arc::new(mounted::report(
        mounted::mount_config(config, roots).await?,
    )?);
    let options = AgentOptions {
        max_turns: args.max_turns,
        approval,
        yes: args.yes,
        ..AgentOptions::default()
    };
    let mut agent = Agent::new(Box::new(model), mounts.clone(), options);
    if let Some(approver) = crate::approver::for_this_session() {
        agent = agent.with_approver(approver);
    }
    let mut events = agent.subscribe();
    let trace = std::io::stderr().is_terminal();
    let printer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if !trace {
                continue;
            }
            match event {
                AgentEvent::ToolStart { name, arguments } => eprintln!("→ {name} {arguments}"),
                AgentEvent::ToolEnd { name, ok, elapsed } => {
                    eprintln!("{} {name} ({elapsed:.1?})", if ok { "✓" } else { "✗" })
                }
                AgentEvent::Approval {
                    name,
                    allowed: false,
                    reason,
                } => eprintln!("✗ {name}: {reason}"),
                AgentEvent::ModelRetry { reason, delay } => {
                    eprintln!("model: {reason}; retrying in {delay:.1?}")
                }
                _ => {}
            }
        }
    });
    let outcome = agent.run(&prompt).await;
    drop(agent);
    let _ = printer.await;
    if let Ok(mounts) = Arc::try_unwrap(mounts) {
        mounts.close().await;
    }
    match outcome {
        Ok(answer) => {
            let mut out = output::stdout();
            writeln!(out, "{}", answer.trim_end())?;
            out.flush()?;
            Ok(())
        }
        Err(AgentError::Model(e)) => Err(model_failure(e)),
        Err(e @ AgentError::MaxTurns(_)) => Err(Failure::Job(e.into())),
    }
}

/// An unreachable or misconfigured endpoint is the user's to fix (exit 2); a model that
/// kept failing is a failed job (exit 1).
fn model_failure(error: ModelError) -> Failure {
    let hint = error.hint();
    match &error {
        ModelError::Unreachable { .. }
        | ModelError::Rejected {
            status: 400..=499, ..
        } => Failure::usage(&error, hint),
        _ => Failure::Job(error.into()),
    }
}
