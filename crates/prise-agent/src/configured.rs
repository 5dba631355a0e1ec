//! A model and the agent's options from what the configuration's `"model"` section
//! and the command line say, for the command line and library users alike.
//!
//! Precedence, field by field: what the caller passes (flags), then the section, then
//! the provider's usual environment variables, then the defaults here.

use prise_config::ModelSettings;
use prise_llm::{
    Anthropic, ClientOptions, Endpoint, Model, ModelError, ModelSpec, OpenAiCompatible, Provider,
    Sampling, ToolChoice,
};

use crate::AgentOptions;

/// The model when nobody names one: a local Ollama.
pub const DEFAULT_MODEL: &str = "ollama:qwen2.5";
/// The temperature local models get when none is set: tool calls want a model that
/// does not wander (Ollama and llama.cpp default to 0.8).
pub const LOCAL_TEMPERATURE: f64 = 0.2;
/// The reply cap local models get when none is set: a small model that loops would
/// otherwise write until its context is full.
pub const LOCAL_MAX_OUTPUT_TOKENS: u64 = 2048;

/// What the caller (the command line) says about the model; `None` leaves a field to
/// the configuration.
#[derive(Debug, Clone, Default)]
pub struct ModelChoice {
    /// `provider:model`.
    pub name: Option<String>,
    /// The provider's base URL.
    pub base_url: Option<String>,
    /// The API key.
    pub api_key: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Whether the model must call a tool.
    pub tool_choice: Option<ToolChoice>,
}

/// Why no model could be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The name, endpoint or a setting is wrong: the person's to fix.
    #[error("{0}")]
    Setting(String),
    /// The client could not be made.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Whether the provider runs models on the person's own machine (or network).
pub fn is_local(provider: Provider) -> bool {
    matches!(provider, Provider::Ollama | Provider::OpenAiCompatible)
}

/// The model `choice`, else `settings`, else [`DEFAULT_MODEL`] names.
pub fn model_spec(choice: &ModelChoice, settings: &ModelSettings) -> Result<ModelSpec, BuildError> {
    choice
        .name
        .as_deref()
        .or(settings.name.as_deref())
        .unwrap_or(DEFAULT_MODEL)
        .parse()
        .map_err(BuildError::Setting)
}

/// The model `choice` and `settings` name, and where it is served: from them, then
/// from the provider's environment variables (`env`).
pub fn endpoint(
    choice: &ModelChoice,
    settings: &ModelSettings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(ModelSpec, Endpoint), BuildError> {
    let spec = model_spec(choice, settings)?;
    let endpoint = spec
        .endpoint(
            choice.base_url.as_deref().or(settings.base_url.as_deref()),
            choice.api_key.as_deref().or(settings.api_key.as_deref()),
            env,
        )
        .map_err(BuildError::Setting)?;
    Ok((spec, endpoint))
}

/// Why a model the endpoint answered 404 for is missing, when the endpoint can say:
/// the models it serves, and for Ollama how to fetch the one asked for.
pub async fn missing_model(spec: &ModelSpec, endpoint: &Endpoint) -> Option<String> {
    let served = prise_llm::available_models(spec.provider, endpoint)
        .await
        .ok()?;
    if served.contains(&spec.model) {
        return None;
    }
    let fetch = match spec.provider {
        Provider::Ollama => format!("; `ollama pull {}` fetches it", spec.model),
        _ => String::new(),
    };
    let list = if served.is_empty() {
        "it serves no model".to_owned()
    } else {
        format!("it serves {}", served.join(", "))
    };
    Some(format!(
        "model {} not found on {}: {list}{fetch}",
        spec.model, endpoint.base_url
    ))
}

/// The client for the model `choice` and `settings` name, its endpoint from them and
/// then from the provider's environment variables (`env`).
pub fn build_model(
    choice: &ModelChoice,
    settings: &ModelSettings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Model>, BuildError> {
    let (spec, endpoint) = endpoint(choice, settings, env)?;
    let local = is_local(spec.provider);
    let tool_choice = match (choice.tool_choice, settings.tool_choice.as_deref()) {
        (Some(choice), _) => Some(choice),
        (None, Some(text)) => Some(text.parse().map_err(BuildError::Setting)?),
        (None, None) => None,
    };
    let options = ClientOptions {
        idle_timeout: settings
            .idle_timeout
            .unwrap_or(prise_llm::DEFAULT_IDLE_TIMEOUT),
        max_output_tokens: settings
            .max_output_tokens
            .map(|n| n as u64)
            .or(local.then_some(LOCAL_MAX_OUTPUT_TOKENS)),
        sampling: Sampling {
            temperature: choice
                .temperature
                .or(settings.temperature)
                .or(local.then_some(LOCAL_TEMPERATURE)),
            top_p: choice.top_p.or(settings.top_p),
            seed: choice.seed.or(settings.seed),
            tool_choice,
        },
    };
    // Hosted models see images; most local ones do not (a vision model says so).
    let images = settings.images.unwrap_or(!local);
    Ok(match spec.provider {
        Provider::Anthropic => {
            Box::new(Anthropic::with_options(endpoint, spec.model, options)?.with_images(images))
        }
        // Small local models often write tool calls as text; hosted ones do not.
        _ => Box::new(
            OpenAiCompatible::with_options(endpoint, spec.model, options)?
                .with_tool_call_recovery(settings.tool_call_recovery.unwrap_or(local))
                .with_images(images),
        ),
    })
}

/// The agent's options from `settings` (turns, prompt, output cap, retries); the
/// approval policy and the rest are the caller's to set.
pub fn agent_options(settings: &ModelSettings) -> AgentOptions {
    let defaults = AgentOptions::default();
    AgentOptions {
        max_turns: settings.max_turns.unwrap_or(defaults.max_turns),
        system_prompt: settings
            .system_prompt
            .clone()
            .unwrap_or(defaults.system_prompt.clone()),
        max_tool_output: settings.max_tool_output.unwrap_or(defaults.max_tool_output),
        tool_call_retries: settings
            .tool_call_retries
            .unwrap_or(defaults.tool_call_retries),
        tool_search: settings.tool_search.unwrap_or(defaults.tool_search),
        ..defaults
    }
}
