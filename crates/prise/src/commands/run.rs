//! `prise run`: one question to the agent, the answer on stdout.

use std::io::{IsTerminal, Read, Write};
use std::sync::Arc;

use prise_agent::configured;
use prise_agent::{Agent, AgentError, AgentEvent, AgentOptions, Refusal, ToolOutcome};
use prise_config::Config;
use prise_llm::{Model, ModelError, ModelSpec, StopReason};
use prise_mcp::Mounts;
use prise_mcp::progress::CallNews;

use crate::cli::{AgentArgs, Output, RunArgs};
use crate::commands::mounted::{Servers, Wanted};
use crate::failure::Failure;
use crate::output::{self, revealed};
use prise_agent::session::Session;

/// The model when neither flags nor configuration name one.
pub use prise_agent::configured::DEFAULT_MODEL;

/// Mounts the servers, asks the model, prints the final answer. The tool trace goes to
/// stderr when it is a terminal.
pub async fn run(servers: Servers, args: RunArgs) -> Result<(), Failure> {
    let model = model(&args.agent, servers.config.as_ref())?;
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
    let model_name = model_spec(&args.agent, servers.config.as_ref())?;
    let settings = servers.model_settings();
    let (mut agent, mounts) = agent(servers, &args.agent, model).await?;
    let mut session = match &args.session {
        Some(id) => {
            let (session, messages) =
                Session::open(Some(id), false, &model_name.to_string()).map_err(session_failure)?;
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
        let mut summary = prise_agent::summary::RunSummary::default();
        while let Some(event) = events.recv().await {
            summary.record(&event);
            if output == Output::StreamJson {
                let mut out = output::stdout();
                writeln!(out, "{}", prise_agent::stream_json::event(&event))?;
                out.flush()?;
            }
            match &event {
                _ if trace && output != Output::StreamJson => print_trace(&event),
                // A script must hear of a call that was not run, and how to allow it.
                AgentEvent::Approval {
                    name,
                    verdict: Err(refusal),
                    ..
                } => print_refusal(name, *refusal),
                // Said whether or not a person watches: the answer is not what it seems.
                AgentEvent::UnreadableCall { .. }
                | AgentEvent::TurnEnd {
                    stop: StopReason::Degenerate(_) | StopReason::Length,
                    ..
                } => print_trace(&event),
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
    let mut summary = printer.await.map_err(|e| Failure::Job(e.into()))??;
    if let Ok(mounts) = Arc::try_unwrap(mounts) {
        mounts.close().await;
    }
    let answer = match outcome {
        Ok(answer) => answer,
        Err(AgentError::Model(error)) => {
            return Err(explained(error, &args.agent, &settings).await);
        }
        Err(error) => return Err(agent_failure(error, &model_name.to_string())),
    };
    let mut out = output::stdout();
    match output {
        Output::Text => writeln!(out, "{}", answer.trim_end())?,
        Output::Json => {
            summary.answer = answer.clone();
            output::json(&mut out, &summary)?
        }
        Output::StreamJson => writeln!(
            out,
            "{}",
            serde_json::json!({"type": "answer", "text": answer})
        )?,
    }
    out.flush()?;
    if summary.all_refused() {
        return Err(Failure::Job(anyhow::anyhow!(
            "the model's tool calls were all refused ({}), so its answer rests on no tool result",
            summary.tool_calls.len()
        )));
    }
    Ok(())
}

/// The tool trace a person sees on stderr (names and arguments come from servers and
/// the model: shown [`revealed`]).
pub fn print_trace(event: &AgentEvent) {
    let p = |text: &str| revealed(text).into_owned();
    match event {
        AgentEvent::ToolStart {
            name,
            arguments,
            recovered,
            ..
        } => eprintln!(
            "→ {} {}{}",
            p(name),
            p(arguments),
            if *recovered {
                " (read from the model's text)"
            } else {
                ""
            }
        ),
        // A task's news, but not its end: the call's own line says how it ended.
        AgentEvent::ToolProgress {
            name,
            news: CallNews::Task { status, message },
            ..
        } if !status.is_terminal() => {
            eprintln!(
                "  … {}: {}",
                p(name),
                p(message
                    .as_deref()
                    .unwrap_or(prise_mcp::task_status_word(*status)))
            )
        }
        AgentEvent::UnreadableCall { reason, again } => eprintln!(
            "(the model's tool call could not be read: {}{})",
            p(reason),
            if *again {
                "; it is told how and asked again"
            } else {
                ""
            }
        ),
        AgentEvent::TurnEnd {
            stop: StopReason::Degenerate(how),
            ..
        } => eprintln!("(the model's output degenerated, {how}; it was cut there)"),
        AgentEvent::ToolEnd {
            name,
            outcome: outcome @ (ToolOutcome::Ok | ToolOutcome::Error),
            elapsed,
            result,
            ..
        } => {
            let mark = if *outcome == ToolOutcome::Ok {
                "✓"
            } else {
                "✗"
            };
            eprintln!("{mark} {} ({elapsed:.1?})", p(name));
            if !result.suspicious.is_empty() {
                let kinds: Vec<&str> = result.suspicious.iter().map(|f| f.kind.as_str()).collect();
                eprintln!(
                    "  ⚠ its result holds text aimed at the model ({}); passed on as data",
                    kinds.join(", ")
                );
            }
        }
        AgentEvent::ToolEnd {
            name,
            outcome: ToolOutcome::Unknown,
            ..
        } => eprintln!("✗ {}: the model named a tool that does not exist", p(name)),
        AgentEvent::ToolEnd {
            name,
            outcome: ToolOutcome::Cancelled,
            ..
        } => eprintln!("✗ {}: cancelled", p(name)),
        AgentEvent::Approval {
            name,
            verdict: Err(refusal),
            ..
        } => print_refusal(name, *refusal),
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

/// A call that was not run, with how to allow it.
fn print_refusal(name: &str, refusal: Refusal) {
    let name = revealed(name);
    let hint = match refusal {
        Refusal::NobodyToAsk => format!(
            "; allow it with --yes, or with an approval rule: \"approval\": {{\"tools\": {{\"{name}\": \"allow\"}}}}"
        ),
        Refusal::Denied => "; an \"approval\" rule of the configuration denies it".to_owned(),
        Refusal::Declined => String::new(),
    };
    eprintln!("✗ {name} was not run: {refusal}{hint}");
}

/// Which model `--model`, the configuration or the default names.
pub fn model_spec(args: &AgentArgs, config: Option<&Config>) -> Result<ModelSpec, Failure> {
    let settings = config.map(|c| c.model.clone()).unwrap_or_default();
    configured::model_spec(&args.model_choice(), &settings).map_err(build_failure)
}

/// The model named by `--model` (or `PRISE_MODEL`), else by the configuration's
/// `"model"`, else the default (see `prise_agent::configured`).
pub fn model(args: &AgentArgs, config: Option<&Config>) -> Result<Box<dyn Model>, Failure> {
    let settings = config.map(|c| c.model.clone()).unwrap_or_default();
    configured::build_model(&args.model_choice(), &settings, &|name| {
        std::env::var(name).ok()
    })
    .map_err(build_failure)
}

/// A model that cannot be built is the user's to fix (see [`model_failure`]).
pub fn build_failure(error: configured::BuildError) -> Failure {
    match error {
        configured::BuildError::Setting(message) => Failure::usage(message, None),
        configured::BuildError::Model(error) => model_failure(error),
    }
}

/// Mounts the configured servers and builds an agent over them with `model`, the
/// configured approval policy and, in a terminal, someone to ask.
pub async fn agent(
    servers: Servers,
    args: &AgentArgs,
    model: Box<dyn Model>,
) -> Result<(Agent, Arc<Mounts>), Failure> {
    let options = agent_options(servers.config.as_ref(), args);
    let mounts = Arc::new(servers.mount_for(Wanted::All).await?);
    let mut agent = Agent::new(model, mounts.clone(), options);
    if let Some(approver) = crate::approver::for_this_session() {
        agent = agent.with_approver(approver);
    }
    Ok((agent, mounts))
}

/// How the agent runs: the configuration's approval policy, model settings and
/// always-loaded servers, with the command line's limits over them.
pub fn agent_options(config: Option<&Config>, args: &AgentArgs) -> AgentOptions {
    let (approval, settings) = config
        .map(|c| (c.approval.clone(), c.model.clone()))
        .unwrap_or_default();
    let from_settings = configured::agent_options(&settings);
    AgentOptions {
        max_turns: args.max_turns.unwrap_or(from_settings.max_turns),
        tool_search: args.tool_search.unwrap_or(from_settings.tool_search),
        always_loaded: config.map(Config::always_loaded).unwrap_or_default(),
        approval,
        yes: args.yes,
        output_dir: prise_config::state_dir().map(|dir| dir.join("outputs")),
        ..from_settings
    }
}

/// A model error, with the models the endpoint serves when it said 404 for the one
/// asked for (Ollama: "model not found, try pulling it first").
pub async fn explained(
    error: ModelError,
    args: &AgentArgs,
    settings: &prise_config::ModelSettings,
) -> Failure {
    if let ModelError::Rejected { status: 404, .. } = &error
        && let Ok((spec, endpoint)) =
            configured::endpoint(&args.model_choice(), settings, &|name| {
                std::env::var(name).ok()
            })
        && let Some(why) = configured::missing_model(&spec, &endpoint).await
    {
        return Failure::usage(why, "`prise models` lists them".to_owned());
    }
    model_failure(error)
}

/// A run that ended without an answer, for the person: what helps when a model could
/// not call tools.
pub fn agent_failure(error: AgentError, model: &str) -> Failure {
    match error {
        AgentError::Model(e) => model_failure(e),
        e @ AgentError::MaxTurns(_) => Failure::Job(e.into()),
        AgentError::UnreadableCall { reason, tries } => Failure::Job(anyhow::anyhow!(
            "{model} kept writing tool calls that could not be read ({reason}; {tries} replies in a row). \
             What helps: native tool calling on its server (llama-server --jinja; a tool-capable model \
             in Ollama), a larger model, or --tool-choice required"
        )),
    }
}

/// A session that cannot be opened is the user's to fix.
pub fn session_failure(error: prise_agent::session::SessionError) -> Failure {
    let hint = match &error {
        prise_agent::session::SessionError::NoneSaved => {
            Some("start one with prise chat".to_owned())
        }
        _ => None,
    };
    Failure::usage(error, hint)
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
