//! A server's request that the client's model write something (sampling).
//!
//! The mount layer has no model: a server is offered sampling only when the caller
//! gives a [`Sampler`] that can get the request answered (the gateway passes it to the
//! client that made the call). Without one the capability is not advertised, and a
//! capability that always fails is worse than none.

// Sampling is deprecated by the 2026-07-28 revision (SEP-2577); servers of the dated
// era still ask for it.
#![allow(deprecated)]

use std::future::Future;
use std::pin::Pin;

use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};

/// Why a sampling request was not answered, in the words the server is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unanswered(pub String);

impl From<String> for Unanswered {
    fn from(words: String) -> Unanswered {
        Unanswered(words)
    }
}

impl From<&str> for Unanswered {
    fn from(words: &str) -> Unanswered {
        Unanswered(words.to_owned())
    }
}

/// A future answer, or why there is none.
pub type SamplingFuture =
    Pin<Box<dyn Future<Output = Result<CreateMessageResult, Unanswered>> + Send>>;

/// Who answers servers' sampling requests.
pub trait Sampler: Send + Sync + std::fmt::Debug + 'static {
    /// Gets `request` from `server` answered.
    fn create_message(&self, server: &str, request: CreateMessageRequestParams) -> SamplingFuture;
}
