//! `prise run`: one question to the agent, the answer on stdout.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use prise_agent::{Agent, AgentError, AgentEvent, AgentOptions};
use prise_config::{Config, ModelSettings};
use prise_llm::{
    Anthropic, ClientOptions, Model, ModelError, ModelSpec, OpenAiCompatible, Provider, StopReason,
};
use prise_mcp::Mounts;

use crate::cli::{AgentArgs, Output, RunArgs};
use crate::commands::session::Session;
use crate::commands::{config, mounted};
use crate::failure::Failure;
use crate::output::{self, revealed};

/// The model when neither flags nor configuration name one: a local Ollama.
pub const DEFAULT_MODEL: &str = "ollama:qwen2.5";

/// Mounts the servers, asks the model, prints the final answer. The tool trace goes to
/// stderr when it is a terminal.
pub async fn run(config: Option<&Path>, roots: &[PathBuf], args: RunArgs) -> Result<(), Failure> {
    let config = config::load(config)?;
    let model = model(&args.agent, config.as_ref())?;
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
    let (mut agent, mounts) = agent(config, roots, &args.agent, model).await?;
    let mut session = match &args.session {
        Some(id) => {
            let (session, messages) = Session::open(Some(id), false)?;
            agent.resume(messages);
            Some(session)
        }
        None => None,
    };
    let mut events = agent.subscribe();
    let output = args.output;
    let trace = std::io::stderr().is_terminal();
    // One task consumes the events: the terminal trace, stream-json, and the summary
    // that `--output json` prints at the end.
    let printer = tokio::spawn(async move {
        let mut summary = Summary::default();
        while let Some(event) = events.recv().await {
            summary.record(&event);
            match output {
                Output::StreamJson => {
                    let mut out = output::stdout();
                    writeln!(out, "{}", event_json(&event))?;
                    out.flush()?;
                }
                _ if trace => print_trace(&event),
                _ => {}
            }
        }
        Ok::<_, std::io::Error>(summary)
    });
    let outcome = agent.run(&prompt).await;
    if let Some(session) = session.as_mut() {
        session.save(agent.history())?;
    }
    drop(agent);
    let summary = printer.await.map_err(|e| Failure::Job(e.into()))??;
    if let Ok(mounts) = Arc::try_unwrap(mounts) {
        mounts.close().await;
    }
    let answer = match outcome {
        Ok(answer) => answer,
        Err(AgentError::Model(e)) => return Err(model_failure(e)),
        Err(e @ AgentError::MaxTurns(_)) => return Err(Failure::Job(e.into())),
    };
    let mut out = output::stdout();
    match output {
        Output::Text => writeln!(out, "{}", answer.trim_end())?,
        Output::Json => output::json(&mut out, &summary.json(&answer))?,
        Output::StreamJson => writeln!(
            out,
            "{}",
            serde_json::json!({"type": "answer", "text": answer})
        )?,
    }
    out.flush()?;
    Ok(())
}

/// The tool trace a person sees on stderr (names and arguments come from servers and
/// the model: shown [`revealed`]).
pub fn print_trace(event: &AgentEvent) {
    let p = |text: &str| revealed(text).into_owned();
    match event {
        AgentEvent::ToolStart { name, arguments } => eprintln!("→ {} {}", p(name), p(arguments)),
        AgentEvent::ToolEnd { name, ok, elapsed } => {
            eprintln!(
                "{} {} ({elapsed:.1?})",
                if *ok { "✓" } else { "✗" },
                p(name)
            )
        }
        AgentEvent::Approval {
            name,
            allowed: false,
            reason,
        } => eprintln!("✗ {}: {reason}", p(name)),
        AgentEvent::ModelRetry { reason, delay } => {
            eprintln!("model: {}; retrying in {delay:.1?}", p(reason))
        }
        AgentEvent::TurnEnd {
            stop: StopReason::Length,
            ..
        } => eprintln!(
            "(the model stopped at its output limit; \"maxOutputTokens\" in the config's \"model\" section raises it)"
        ),
        _ => {}
    }
}

/// One event as a line of `--output stream-json`.
fn event_json(event: &AgentEvent) -> serde_json::Value {
    use serde_json::json;
    let ms = |d: &std::time::Duration| d.as_secs_f64() * 1e3;
    match event {
        AgentEvent::TurnStart { turn } => json!({"type": "turn-start", "turn": turn}),
        AgentEvent::ModelDelta(text) => json!({"type": "model-delta", "text": text}),
        AgentEvent::ModelReasoning(text) => json!({"type": "model-reasoning", "text": text}),
        AgentEvent::ModelRetry { reason, delay } => {
            json!({"type": "error", "retrying": true, "message": reason, "delayMs": ms(delay)})
        }
        AgentEvent::Error(message) => json!({"type": "error", "message": message}),
        AgentEvent::Approval {
            name,
            allowed,
            reason,
        } => json!({"type": "approval", "tool": name, "allowed": allowed, "reason": reason}),
        AgentEvent::ToolStart { name, arguments } => {
            json!({"type": "tool-start", "tool": name, "arguments": arguments})
        }
        AgentEvent::ToolEnd { name, ok, elapsed } => {
            json!({"type": "tool-end", "tool": name, "ok": ok, "elapsedMs": ms(elapsed)})
        }
        AgentEvent::TurnEnd {
            turn,
            elapsed,
            usage,
            stop,
        } => json!({
            "type": "turn-end", "turn": turn, "elapsedMs": ms(elapsed),
            "stop": match stop {
                StopReason::End => "end",
                StopReason::ToolCalls => "tool-calls",
                StopReason::Length => "length",
                StopReason::Other(other) => other,
            },
            "usage": usage.map(|u| json!({"input": u.input, "output": u.output})),
        }),
    }
}

/// What `--output json` reports besides the answer.
#[derive(Default)]
struct Summary {
    turns: usize,
    tools: Vec<serde_json::Value>,
    input_tokens: u64,
    output_tokens: u64,
}

impl Summary {
    fn record(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TurnEnd { turn, usage, .. } => {
                self.turns = *turn;
                if let Some(usage) = usage {
                    self.input_tokens += usage.input;
                    self.output_tokens += usage.output;
                }
            }
            AgentEvent::ToolEnd { name, ok, elapsed } => {
                self.tools.push(serde_json::json!({"tool": name, "ok": ok, "elapsedMs": elapsed.as_secs_f64() * 1e3}))
            }
            _ => {}
        }
    }

    fn json(&self, answer: &str) -> serde_json::Value {
        serde_json::json!({
            "answer": answer,
            "turns": self.turns,
            "toolCalls": self.tools,
            "usage": {"input": self.input_tokens, "output": self.output_tokens},
        })
    }
}

/// Which model `--model`, the configuration or the default names.
pub fn model_spec(args: &AgentArgs, config: Option<&Config>) -> Result<ModelSpec, Failure> {
    args.model
        .as_deref()
        .or(config.and_then(|c| c.model.name.as_deref()))
        .unwrap_or(DEFAULT_MODEL)
        .parse()
        .map_err(|e: String| Failure::usage(e, None))
}

/// The model named by `--model` (or `PRISE_MODEL`), else by the configuration's
/// `"model"`, else [`DEFAULT_MODEL`]; its endpoint from flags, then the configuration,
/// then the provider's usual environment variables.
pub fn model(args: &AgentArgs, config: Option<&Config>) -> Result<Box<dyn Model>, Failure> {
    let settings = config.map(|c| &c.model);
    let from_file =
        |field: fn(&ModelSettings) -> Option<&String>| settings.and_then(field).map(String::as_str);
    let spec = model_spec(args, config)?;
    let endpoint = spec
        .endpoint(
            args.base_url
                .as_deref()
                .or(from_file(|s| s.base_url.as_ref())),
            args.api_key
                .as_deref()
                .or(from_file(|s| s.api_key.as_ref())),
            &|name| std::env::var(name).ok(),
        )
        .map_err(|e| Failure::usage(e, None))?;
    let recovery = settings.and_then(|s| s.tool_call_recovery);
    let options = ClientOptions {
        idle_timeout: settings
            .and_then(|s| s.idle_timeout)
            .unwrap_or(prise_llm::DEFAULT_IDLE_TIMEOUT),
        max_output_tokens: settings.and_then(|s| s.max_output_tokens).map(|n| n as u64),
    };
    // Hosted models see images; most local ones do not (a vision model says so in the
    // configuration).
    let images = settings.and_then(|s| s.images).unwrap_or(matches!(
        spec.provider,
        Provider::OpenAi | Provider::Anthropic | Provider::Gemini
    ));
    Ok(match spec.provider {
        Provider::Anthropic => {
            let client =
                Anthropic::with_options(endpoint, spec.model, options).map_err(model_failure)?;
            Box::new(client.with_images(images))
        }
        // Small local models often write tool calls as text; hosted ones do not.
        provider => {
            let local = matches!(provider, Provider::Ollama | Provider::OpenAiCompatible);
            let client = OpenAiCompatible::with_options(endpoint, spec.model, options)
                .map_err(model_failure)?;
            Box::new(
                client
                    .with_tool_call_recovery(recovery.unwrap_or(local))
                    .with_images(images),
            )
        }
    })
}

/// Mounts the configured servers and builds an agent over them with `model`, the
/// configured approval policy and, in a terminal, someone to ask.
pub async fn agent(
    config: Option<Config>,
    roots: &[PathBuf],
    args: &AgentArgs,
    model: Box<dyn Model>,
) -> Result<(Agent, Arc<Mounts>), Failure> {
    let (approval, settings) = config
        .as_ref()
        .map(|c| (c.approval.clone(), c.model.clone()))
        .unwrap_or_default();
    let defaults = AgentOptions::default();
    let mounts = Arc::new(mounted::report(
        mounted::mount_config(config, roots).await?,
    )?);
    let options = AgentOptions {
        max_turns: args
            .max_turns
            .or(settings.max_turns)
            .unwrap_or(defaults.max_turns),
        system_prompt: settings.system_prompt.unwrap_or(defaults.system_prompt),
        max_tool_output: settings.max_tool_output.unwrap_or(defaults.max_tool_output),
        approval,
        yes: args.yes,
        output_dir: prise_mcp::child::default_state_dir().map(|dir| dir.join("outputs")),
    };
    let mut agent = Agent::new(model, mounts.clone(), options);
    if let Some(approver) = crate::approver::for_this_session() {
        agent = agent.with_approver(approver);
    }
    Ok((agent, mounts))
}

/// An unreachable or misconfigured endpoint is the user's to fix (exit 2); a model that
/// kept failing is a failed job (exit 1).
pub fn model_failure(error: ModelError) -> Failure {
    let hint = error.hint();
    match &error {
        ModelError::Unreachable { .. }
        | ModelError::Rejected {
            status: 400..=499, ..
        } => Failure::usage(&error, hint),
        _ => Failure::Job(error.into()),
    }
}
