//! What the agent needs of any provider.

use std::future::Future;
use std::pin::Pin;

use crate::{
    Anthropic, Message, ModelError, ModelEvent, OpenAiCompatible, Reply, SchemaDialect,
    ToolDefinition,
};

/// A boxed future of a model turn.
pub type Turn<'a> = Pin<Box<dyn Future<Output = Result<Reply, ModelError>> + Send + 'a>>;

/// A language model that can take one turn of a conversation.
pub trait Model: Send + Sync {
    /// Sends the conversation and the tools; streams events; returns the reply.
    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolDefinition],
        events: &'a mut (dyn FnMut(ModelEvent) + Send),
    ) -> Turn<'a>;

    /// Whether to look for tool calls written as JSON in the text (small local models
    /// do that).
    fn recovers_tool_calls(&self) -> bool {
        false
    }

    /// The JSON Schema dialect its tool definitions must be written in (see
    /// [`crate::adapt_schema`]).
    fn schema_dialect(&self) -> SchemaDialect;
}

impl Model for OpenAiCompatible {
    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolDefinition],
        events: &'a mut (dyn FnMut(ModelEvent) + Send),
    ) -> Turn<'a> {
        Box::pin(OpenAiCompatible::complete(self, messages, tools, events))
    }

    fn recovers_tool_calls(&self) -> bool {
        OpenAiCompatible::recovers_tool_calls(self)
    }

    fn schema_dialect(&self) -> SchemaDialect {
        OpenAiCompatible::schema_dialect(self)
    }
}

impl Model for Anthropic {
    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolDefinition],
        events: &'a mut (dyn FnMut(ModelEvent) + Send),
    ) -> Turn<'a> {
        Box::pin(Anthropic::complete(self, messages, tools, events))
    }

    fn schema_dialect(&self) -> SchemaDialect {
        SchemaDialect::Anthropic
    }
}
