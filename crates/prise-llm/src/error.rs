//! Why a model turn failed.

/// A model request that did not produce a reply.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Nothing answers at the URL.
    #[error("cannot reach the model at {url}: {cause}")]
    Unreachable {
        /// The URL tried.
        url: String,
        /// What the system said.
        cause: String,
    },
    /// The provider answered with an error status that retrying cannot fix.
    #[error("the model endpoint {url} answered HTTP {status}: {message}")]
    Rejected {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// Retries ran out.
    #[error("the model endpoint {url} kept failing ({last}); gave up after {attempts} tries")]
    GaveUp {
        /// The URL.
        url: String,
        /// Tries made.
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// The reply broke off with an error worth another try (overloaded, a server
    /// error, a dropped connection).
    #[error("the model's reply broke off: {0}")]
    Interrupted(String),
    /// The reply could not be understood.
    #[error("the model's reply could not be read: {0}")]
    Protocol(String),
}

impl ModelError {
    /// How to fix it, when prise can tell.
    pub fn hint(&self) -> Option<String> {
        match self {
            ModelError::Unreachable { .. } => Some(
                "start the model server (e.g. `ollama serve`), or point prise elsewhere with --base-url, \
                 \"baseUrl\" in the config's \"model\" section, OPENAI_BASE_URL or OLLAMA_HOST"
                    .to_owned(),
            ),
            ModelError::Rejected { status: 401 | 403, .. } => {
                Some("check the API key (OPENAI_API_KEY or ANTHROPIC_API_KEY)".to_owned())
            }
            ModelError::Rejected { status: 404, .. } => Some("check the model name and the base URL (it usually ends in /v1)".to_owned()),
            _ => None,
        }
    }
}
