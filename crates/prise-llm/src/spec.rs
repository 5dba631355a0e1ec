//! Model specs (`provider:model`, as in mcphost) and where each provider lives.

use std::fmt;
use std::str::FromStr;

/// Ollama's OpenAI-compatible endpoint when nothing else is said.
pub const DEFAULT_OLLAMA: &str = "http://localhost:11434/v1";

/// Gemini's OpenAI-compatible endpoint.
const GEMINI: &str = "https://generativelanguage.googleapis.com/v1beta/openai";

/// Who serves the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Ollama (OpenAI-compatible, no key).
    Ollama,
    /// OpenAI.
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
    /// Google's Gemini, through its OpenAI-compatible endpoint.
    Gemini,
    /// Any other OpenAI-compatible server: vLLM, llama.cpp, LM Studio, OpenRouter...
    OpenAiCompatible,
}

impl Provider {
    /// The JSON Schema dialect the provider's API parses.
    pub fn schema_dialect(self) -> crate::SchemaDialect {
        match self {
            Provider::Anthropic => crate::SchemaDialect::Anthropic,
            Provider::Gemini => crate::SchemaDialect::Gemini,
            _ => crate::SchemaDialect::OpenAi,
        }
    }
}

/// `provider:model`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    /// The provider.
    pub provider: Provider,
    /// The model's name at that provider.
    pub model: String,
}

impl FromStr for ModelSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<ModelSpec, String> {
        let Some((provider, model)) = text.split_once(':') else {
            return Err(format!(
                "model {text:?} is not provider:model (e.g. ollama:qwen2.5, openai:gpt-4o-mini)"
            ));
        };
        let provider = match provider {
            "ollama" => Provider::Ollama,
            "openai" => Provider::OpenAi,
            "anthropic" => Provider::Anthropic,
            "gemini" | "google" => Provider::Gemini,
            "openai-compatible" => Provider::OpenAiCompatible,
            other => {
                return Err(format!(
                    "unknown model provider {other:?}: use ollama, openai, anthropic, gemini or openai-compatible"
                ));
            }
        };
        if model.is_empty() {
            return Err(format!("model {text:?} names no model after the colon"));
        }
        Ok(ModelSpec {
            provider,
            model: model.to_owned(),
        })
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let provider = match self.provider {
            Provider::Ollama => "ollama",
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::OpenAiCompatible => "openai-compatible",
        };
        write!(f, "{provider}:{}", self.model)
    }
}

/// Where to send requests, and with which key.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Base URL, without the trailing `/chat/completions` or `/messages`.
    pub base_url: String,
    /// API key, when the provider needs one.
    pub api_key: Option<String>,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print a key, not even in a debug log.
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "****"))
            .finish()
    }
}

impl ModelSpec {
    /// The endpoint from flags first, then the usual environment variables
    /// (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OLLAMA_HOST`, `ANTHROPIC_API_KEY`).
    pub fn endpoint(
        &self,
        base_url: Option<&str>,
        api_key: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Endpoint, String> {
        let env = |name: &str| env(name).filter(|v| !v.is_empty());
        let flag = |value: Option<&str>| value.map(str::to_owned);
        let (base, key) = match self.provider {
            Provider::Ollama => {
                let host = env("OLLAMA_HOST").map(|host| {
                    let host = if host.contains("://") {
                        host
                    } else {
                        format!("http://{host}")
                    };
                    format!("{}/v1", host.trim_end_matches('/'))
                });
                (
                    flag(base_url)
                        .or(host)
                        .unwrap_or_else(|| DEFAULT_OLLAMA.to_owned()),
                    flag(api_key),
                )
            }
            Provider::OpenAi => {
                let key = flag(api_key)
                    .or_else(|| env("OPENAI_API_KEY"))
                    .ok_or("openai: set OPENAI_API_KEY or pass --api-key")?;
                let base = flag(base_url)
                    .or_else(|| env("OPENAI_BASE_URL"))
                    .unwrap_or_else(|| "https://api.openai.com/v1".to_owned());
                (base, Some(key))
            }
            Provider::Gemini => {
                let key = flag(api_key)
                    .or_else(|| env("GEMINI_API_KEY"))
                    .or_else(|| env("GOOGLE_API_KEY"))
                    .ok_or("gemini: set GEMINI_API_KEY or pass --api-key")?;
                let base = flag(base_url).unwrap_or_else(|| GEMINI.to_owned());
                (base, Some(key))
            }
            Provider::OpenAiCompatible => {
                let base = flag(base_url)
                    .or_else(|| env("OPENAI_BASE_URL"))
                    .ok_or("openai-compatible: give the server's URL with --base-url (e.g. http://127.0.0.1:8000/v1)")?;
                (base, flag(api_key).or_else(|| env("OPENAI_API_KEY")))
            }
            Provider::Anthropic => {
                let key = flag(api_key)
                    .or_else(|| env("ANTHROPIC_API_KEY"))
                    .ok_or("anthropic: set ANTHROPIC_API_KEY or pass --api-key")?;
                (
                    flag(base_url).unwrap_or_else(|| "https://api.anthropic.com/v1".to_owned()),
                    Some(key),
                )
            }
        };
        Ok(Endpoint {
            base_url: base.trim_end_matches('/').to_owned(),
            api_key: key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "OLLAMA_HOST" => Some("10.0.0.5:11434".into()),
            "OPENAI_API_KEY" => Some("sk-test".into()),
            _ => None,
        }
    }

    #[test]
    fn specs() {
        let spec: ModelSpec = "ollama:qwen2.5:7b".parse().unwrap();
        assert_eq!(
            (spec.provider, spec.model.as_str()),
            (Provider::Ollama, "qwen2.5:7b")
        );
        assert_eq!(spec.to_string(), "ollama:qwen2.5:7b");
        assert!(
            "qwen2.5"
                .parse::<ModelSpec>()
                .unwrap_err()
                .contains("provider:model")
        );
        assert!(
            "mistral:x"
                .parse::<ModelSpec>()
                .unwrap_err()
                .contains("unknown model provider")
        );
        assert!("openai:".parse::<ModelSpec>().is_err());
    }

    #[test]
    fn endpoints() {
        let ollama: ModelSpec = "ollama:q".parse().unwrap();
        assert_eq!(
            ollama.endpoint(None, None, &env).unwrap().base_url,
            "http://10.0.0.5:11434/v1"
        );
        assert_eq!(
            ollama.endpoint(None, None, &|_| None).unwrap().base_url,
            DEFAULT_OLLAMA
        );
        let openai: ModelSpec = "openai:gpt-4o-mini".parse().unwrap();
        let endpoint = openai.endpoint(None, None, &env).unwrap();
        assert_eq!(endpoint.api_key.as_deref(), Some("sk-test"));
        assert!(!format!("{endpoint:?}").contains("sk-test"));
        assert!(
            openai
                .endpoint(None, None, &|_| None)
                .unwrap_err()
                .contains("OPENAI_API_KEY")
        );
        let gemini: ModelSpec = "google:gemini-2.5-flash".parse().unwrap();
        assert_eq!(gemini.provider, Provider::Gemini);
        let endpoint = gemini
            .endpoint(None, None, &|name| {
                (name == "GEMINI_API_KEY").then(|| "g-key".into())
            })
            .unwrap();
        assert_eq!(endpoint.base_url, GEMINI);
        assert_eq!(endpoint.api_key.as_deref(), Some("g-key"));
        let other: ModelSpec = "openai-compatible:fake".parse().unwrap();
        assert!(
            other
                .endpoint(None, None, &|_| None)
                .unwrap_err()
                .contains("--base-url")
        );
        assert_eq!(
            other
                .endpoint(Some("http://127.0.0.1:9/v1/"), None, &|_| None)
                .unwrap()
                .base_url,
            "http://127.0.0.1:9/v1"
        );
    }
}
