//! What goes to a model and what comes back, independent of any provider.

use serde_json::Value;

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The person.
    User,
    /// The model.
    Assistant,
    /// A tool's result, answering one of the model's calls.
    Tool,
}

/// One message of a conversation (serialisable, so that sessions can be saved).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    /// Who says it.
    pub role: Role,
    /// Its text (empty for an assistant turn that only calls tools).
    pub text: String,
    /// The tools an assistant message calls.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the id of the call it answers.
    pub tool_call_id: Option<String>,
    /// Images that go with the text (a tool's screenshot or chart); sent only to
    /// models that accept images.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// An image, as MCP carries it: base64 data and its media type.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Image {
    /// `image/png`, `image/jpeg`...
    pub mime_type: String,
    /// The bytes, base64-encoded.
    pub data: String,
}

impl Message {
    /// A message of plain text.
    pub fn text(role: Role, text: impl Into<String>) -> Message {
        Message {
            role,
            text: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            images: Vec::new(),
        }
    }

    /// The model's turn: its text and the tools it calls.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Message {
        Message {
            tool_calls,
            ..Message::text(Role::Assistant, text)
        }
    }

    /// A tool's result for the call `id`.
    pub fn tool_result(id: impl Into<String>, text: impl Into<String>) -> Message {
        Message {
            role: Role::Tool,
            text: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(id.into()),
            images: Vec::new(),
        }
    }
}

/// A tool as a model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// Its name, `^[a-zA-Z0-9_-]{1,64}$` for every provider.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Value,
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call, echoed in the result.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments, as the model wrote them (JSON text, possibly invalid).
    pub arguments: String,
}

/// Tokens used by one model turn, when the provider says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Tokens read.
    pub input: u64,
    /// Tokens written.
    pub output: u64,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// It finished its answer.
    End,
    /// It wants tool results.
    ToolCalls,
    /// It hit the output limit.
    Length,
    /// Its output degenerated (one piece over and over, a flood of blank lines) and
    /// was cut there; says how.
    Degenerate(String),
    /// Something else, as the provider named it.
    Other(String),
}

/// One model turn, complete.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Its text.
    pub text: String,
    /// The tools it calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped.
    pub stop: StopReason,
    /// Tokens, when reported.
    pub usage: Option<Usage>,
}

/// What a streaming turn reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// More text.
    TextDelta(String),
    /// More of the model's reasoning (a reasoning field, or `<think>` in the text): not
    /// part of the answer.
    ReasoningDelta(String),
    /// A request failed and will be retried after `delay`.
    Retrying {
        /// Which try failed, from 1.
        attempt: u32,
        /// Why.
        reason: String,
        /// The wait before the next try.
        delay: std::time::Duration,
    },
}
