//! Answering a server's request for input from the user (elicitation, form mode).

use std::future::Future;
use std::pin::Pin;

use rmcp::model::JsonObject;
use serde_json::Value;

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicitation {
    /// The user filled the form.
    Accept(JsonObject),
    /// The user said no.
    Decline,
    /// The user dismissed the question.
    Cancel,
}

/// A future answer.
pub type ElicitationFuture = Pin<Box<dyn Future<Output = Elicitation> + Send>>;

/// Who answers servers' questions: the terminal in interactive use, a policy otherwise.
pub trait Elicitor: Send + Sync + std::fmt::Debug + 'static {
    /// Answers `message` from `server`, whose form is described by the JSON schema
    /// `schema` (an object of primitive properties).
    fn elicit(&self, server: &str, message: &str, schema: &Value) -> ElicitationFuture;
}

/// Declines every question, saying so on the log: for runs with nobody to ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct Decline;

impl Elicitor for Decline {
    fn elicit(&self, server: &str, message: &str, _schema: &Value) -> ElicitationFuture {
        tracing::warn!(
            "server {server} asked for input ({message:?}); declined because nobody can answer (not interactive)"
        );
        Box::pin(std::future::ready(Elicitation::Decline))
    }
}

/// Accepts every question with the defaults its schema gives, for automation and the
/// conformance suite's client scenarios.
#[derive(Debug, Clone, Copy, Default)]
pub struct AcceptDefaults;

impl Elicitor for AcceptDefaults {
    fn elicit(&self, _server: &str, _message: &str, schema: &Value) -> ElicitationFuture {
        Box::pin(std::future::ready(Elicitation::Accept(defaults(schema))))
    }
}

/// The `default` of each property of a form schema.
pub fn defaults(schema: &Value) -> JsonObject {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::defaults;
    use serde_json::json;

    #[test]
    fn defaults_of_each_kind() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "verified": {"type": "boolean", "default": true},
            "note": {"type": "string"}
        }});
        let got = defaults(&schema);
        assert_eq!(got.len(), 3);
        assert_eq!(got["age"], 30);
        assert_eq!(got["verified"], true);
    }
}
