//! What an endpoint serves: the model names behind `GET /models`, which Ollama,
//! llama.cpp, LM Studio, vLLM, OpenAI, Gemini's compatible endpoint and Anthropic all
//! answer, each with a `data` list of `id`s (Ollama's native `/api/tags` is not
//! needed: its `/v1/models` says the same).

use std::time::Duration;

use serde_json::Value;

use crate::error::ModelError;
use crate::send::http_client;
use crate::spec::{Endpoint, Provider};

/// The names of the models `endpoint` serves, sorted.
pub async fn available_models(
    provider: Provider,
    endpoint: &Endpoint,
) -> Result<Vec<String>, ModelError> {
    let url = format!("{}/models", endpoint.base_url.trim_end_matches('/'));
    let client = http_client(Duration::from_secs(30))?;
    let mut request = client.get(&url);
    if let Some(key) = &endpoint.api_key {
        request = match provider {
            Provider::Anthropic => request
                .header("x-api-key", key)
                .header("anthropic-version", "2023-06-01"),
            _ => request.bearer_auth(key),
        };
    }
    let response = request.send().await.map_err(|e| ModelError::Unreachable {
        url: url.clone(),
        cause: crate::send::system_cause(&e),
    })?;
    let status = response.status();
    if !status.is_success() {
        return Err(ModelError::Rejected {
            url,
            status: status.as_u16(),
            message: status.canonical_reason().unwrap_or("").to_owned(),
        });
    }
    let body: Value = response
        .json()
        .await
        .map_err(|e| ModelError::Protocol(format!("{url} did not answer a list of models: {e}")))?;
    let mut names: Vec<String> = body["data"]
        .as_array()
        .or(body["models"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().or(m["name"].as_str()).map(str::to_owned))
        .collect();
    names.sort();
    Ok(names)
}
