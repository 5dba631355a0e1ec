//! The OpenAI-compatible Chat Completions client, streaming.

use std::collections::BTreeMap;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::error::ModelError;
use crate::retry::RetryPolicy;
use crate::schema::SchemaDialect;
use crate::send::{ClientOptions, complete_with_retries, content_type, http_client, not_the_api};
use crate::spec::Endpoint;
use crate::think::{Piece, ThinkSplitter};
use crate::types::{
    Image, Message, ModelEvent, Reply, Role, StopReason, ToolCall, ToolDefinition, Usage,
};

/// A client for one model at one OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    client: reqwest::Client,
    endpoint: Endpoint,
    model: String,
    retry: RetryPolicy,
    recover_tool_calls: bool,
    images: bool,
    max_output_tokens: Option<u64>,
    sampling: crate::Sampling,
}

impl OpenAiCompatible {
    /// A client for `model` at `endpoint`, with the default options and retry policy.
    pub fn new(
        endpoint: Endpoint,
        model: impl Into<String>,
    ) -> Result<OpenAiCompatible, ModelError> {
        OpenAiCompatible::with_options(endpoint, model, ClientOptions::default())
    }

    /// A client for `model` at `endpoint` with `options`.
    pub fn with_options(
        endpoint: Endpoint,
        model: impl Into<String>,
        options: ClientOptions,
    ) -> Result<OpenAiCompatible, ModelError> {
        Ok(OpenAiCompatible {
            client: http_client(options.idle_timeout)?,
            endpoint,
            model: model.into(),
            retry: RetryPolicy::default(),
            recover_tool_calls: false,
            images: false,
            max_output_tokens: options.max_output_tokens,
            sampling: options.sampling,
        })
    }

    /// Whether the agent should look for tool calls written as text (small local models).
    pub fn with_tool_call_recovery(mut self, recover: bool) -> OpenAiCompatible {
        self.recover_tool_calls = recover;
        self
    }

    /// Gemini's compatible endpoint parses an OpenAPI subset of JSON Schema; the rest
    /// speak OpenAI's.
    pub fn schema_dialect(&self) -> SchemaDialect {
        if self
            .endpoint
            .base_url
            .contains("generativelanguage.googleapis.com")
        {
            SchemaDialect::Gemini
        } else {
            SchemaDialect::OpenAi
        }
    }

    /// Whether tool calls written as text are recovered.
    pub fn recovers_tool_calls(&self) -> bool {
        self.recover_tool_calls
    }

    /// Whether the model accepts images: when it does, images of tool results are sent
    /// after them (Chat Completions takes images in user messages only); when it does
    /// not, the model reads only the text, which names each image.
    pub fn with_images(mut self, images: bool) -> OpenAiCompatible {
        self.images = images;
        self
    }

    /// Replaces the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> OpenAiCompatible {
        self.retry = retry;
        self
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.endpoint.base_url)
    }

    /// One model turn: sends the conversation and the tools, streams text deltas and
    /// retries to `events`, and returns the complete reply.
    pub async fn complete(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        events: &mut (dyn FnMut(ModelEvent) + Send),
    ) -> Result<Reply, ModelError> {
        let mut body = request_body(&self.model, messages, tools, self.images);
        if let Some(tokens) = self.max_output_tokens {
            body[max_tokens_field(&self.endpoint.base_url)] = tokens.into();
        }
        let sampling = &self.sampling;
        if let Some(t) = sampling.temperature {
            body["temperature"] = t.into();
        }
        if let Some(p) = sampling.top_p {
            body["top_p"] = p.into();
        }
        if let Some(seed) = sampling.seed {
            body["seed"] = seed.into();
        }
        if let (Some(choice), false) = (sampling.tool_choice, tools.is_empty()) {
            body["tool_choice"] = match choice {
                crate::ToolChoice::Auto => "auto",
                crate::ToolChoice::Required => "required",
                crate::ToolChoice::None => "none",
            }
            .into();
        }
        let auth: Vec<(&str, String)> = match &self.endpoint.api_key {
            Some(key) => vec![("authorization", format!("Bearer {key}"))],
            None => Vec::new(),
        };
        complete_with_retries(
            &self.client,
            &self.url(),
            &body,
            &auth,
            &self.retry,
            events,
            |response, events| Box::pin(read_reply(response, events)),
        )
        .await
    }
}

/// The name of the output cap: OpenAI's current models refuse the older name, which is
/// the only one the servers that copy its API know.
fn max_tokens_field(base_url: &str) -> &'static str {
    if base_url.contains("api.openai.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

/// The reply, streamed or (from servers that ignore `stream`) in one piece.
async fn read_reply(
    response: reqwest::Response,
    events: &mut (dyn FnMut(ModelEvent) + Send),
) -> Result<Reply, ModelError> {
    let content_type = content_type(&response);
    if content_type.starts_with("text/event-stream") {
        return read_stream(response, events).await;
    }
    let body = response
        .bytes()
        .await
        .map_err(|e| ModelError::Interrupted(format!("the reply broke off: {e}")))?;
    let value: Value = serde_json::from_slice(&body).map_err(|_| not_the_api(&content_type))?;
    let reply = whole_reply(&value)?;
    if !reply.text.is_empty() {
        events(ModelEvent::TextDelta(reply.text.clone()));
    }
    Ok(reply)
}

/// The request body: the conversation in OpenAI's shape, streaming with usage.
fn request_body(
    model: &str,
    messages: &[Message],
    tools: &[ToolDefinition],
    images: bool,
) -> Value {
    let mut shaped: Vec<Value> = Vec::with_capacity(messages.len());
    // Tool messages carry text only, so the images of one turn's results follow its
    // last tool message, in one user message that says which call each came from.
    let mut pending: Vec<Value> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        shaped.push(message_json(message, images));
        if !images || message.role != Role::Tool {
            continue;
        }
        if !message.images.is_empty() {
            let id = message.tool_call_id.as_deref().unwrap_or("?");
            pending.push(
                json!({"type": "text", "text": format!("Image(s) returned by tool call {id}:")}),
            );
            pending.extend(message.images.iter().map(image_part));
        }
        let last_of_turn = messages
            .get(i + 1)
            .is_none_or(|next| next.role != Role::Tool);
        if last_of_turn && !pending.is_empty() {
            shaped.push(json!({"role": "user", "content": std::mem::take(&mut pending)}));
        }
    }
    let messages = shaped;
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
    }
    body
}

fn image_part(image: &Image) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", image.mime_type, image.data)}})
}

fn message_json(message: &Message, images: bool) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.text}),
        Role::User if images && !message.images.is_empty() => {
            let mut parts = vec![json!({"type": "text", "text": message.text})];
            parts.extend(message.images.iter().map(image_part));
            json!({"role": "user", "content": parts})
        }
        Role::User => json!({"role": "user", "content": message.text}),
        Role::Tool => {
            json!({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text})
        }
        Role::Assistant => {
            // No content is null beside tool calls, but must be a string without them
            // (a model that answered nothing).
            let content = if message.text.is_empty() && !message.tool_calls.is_empty() {
                Value::Null
            } else {
                message.text.clone().into()
            };
            let mut value = json!({"role": "assistant", "content": content});
            if !message.tool_calls.is_empty() {
                value["tool_calls"] = message
                    .tool_calls
                    .iter()
                    .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                    .collect();
            }
            value
        }
    }
}

/// A tool call being assembled from deltas.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Reads the SSE stream: text deltas go to `events` as they come; tool calls are
/// assembled by their `index` (parallel calls interleave).
async fn read_stream(
    response: reqwest::Response,
    events: &mut (dyn FnMut(ModelEvent) + Send),
) -> Result<Reply, ModelError> {
    let body = http::Response::from(response).into_body();
    let mut stream = sse_stream::SseStream::new(body);
    let mut text = String::new();
    let mut calls: BTreeMap<u64, PartialCall> = BTreeMap::new();
    let mut stop = None;
    let mut usage = None;
    let mut thoughts = ThinkSplitter::default();
    let mut watch = crate::degenerate::Watch::default();
    while let Some(event) = stream.next().await {
        let event = event.map_err(|e| ModelError::Interrupted(format!("the stream broke: {e}")))?;
        let Some(data) = event.data else { continue };
        if data.trim() == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(&data)
            .map_err(|e| ModelError::Protocol(format!("bad chunk {data:?}: {e}")))?;
        if let Some(error) = chunk.get("error") {
            // A bad request is not worth repeating; anything else (overload, a server
            // error) may pass.
            let kind = format!("{} {}", error["type"], error["code"]);
            let message = error["message"]
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(if kind.contains("invalid") {
                ModelError::Protocol(format!("the model reported an error mid-stream: {message}"))
            } else {
                ModelError::Interrupted(message)
            });
        }
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            usage = Some(Usage {
                input: u["prompt_tokens"].as_u64().unwrap_or(0),
                output: u["completion_tokens"].as_u64().unwrap_or(0),
            });
        }
        let Some(choice) = chunk["choices"].get(0) else {
            continue;
        };
        let delta = &choice["delta"];
        // vLLM and llama.cpp name it reasoning_content, Ollama reasoning.
        let reasoning = delta["reasoning_content"]
            .as_str()
            .or(delta["reasoning"].as_str());
        if let Some(thought) = reasoning.filter(|r| !r.is_empty()) {
            events(ModelEvent::ReasoningDelta(thought.to_owned()));
        }
        if let Some(piece) = delta["content"].as_str().filter(|p| !p.is_empty()) {
            for piece in thoughts.push(piece) {
                emit(piece, &mut text, events);
            }
            // A small model that loops would write until its context is full.
            if let Some(how) = watch.push(piece) {
                stop = Some(StopReason::Degenerate(how));
                break;
            }
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(calls.len() as u64);
            let partial = calls.entry(index).or_default();
            // OpenAI sends the id and the name once, but some compatible servers repeat
            // them in every delta of the call: a repeat is not more of the name.
            if let Some(id) = call["id"].as_str().filter(|_| partial.id.is_empty()) {
                partial.id = id.to_owned();
            }
            if let Some(name) = call["function"]["name"].as_str()
                && name != partial.name
            {
                partial.name.push_str(name);
            }
            if let Some(arguments) = call["function"]["arguments"].as_str() {
                partial.arguments.push_str(arguments);
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            stop = Some(stop_reason(reason));
        }
    }
    for piece in thoughts.finish() {
        emit(piece, &mut text, events);
    }
    let tool_calls: Vec<ToolCall> = calls
        .into_values()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: if c.id.is_empty() {
                format!("call_{i}")
            } else {
                c.id
            },
            name: c.name,
            arguments: c.arguments,
        })
        .collect();
    let stop = stop.unwrap_or(if tool_calls.is_empty() {
        StopReason::End
    } else {
        StopReason::ToolCalls
    });
    Ok(Reply {
        text,
        tool_calls,
        stop,
        usage,
    })
}

/// Sends a sorted piece of content on: text to the answer, thoughts aside.
fn emit(piece: Piece, text: &mut String, events: &mut (dyn FnMut(ModelEvent) + Send)) {
    match piece {
        Piece::Text(piece) => {
            text.push_str(&piece);
            events(ModelEvent::TextDelta(piece));
        }
        Piece::Reasoning(thought) => events(ModelEvent::ReasoningDelta(thought)),
    }
}

/// A non-streamed completion.
fn whole_reply(value: &Value) -> Result<Reply, ModelError> {
    let choice = value["choices"]
        .get(0)
        .ok_or_else(|| ModelError::Protocol(format!("no choices in {value}")))?;
    let message = &choice["message"];
    let tool_calls = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: c["id"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("call_{i}")),
            name: c["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            arguments: c["function"]["arguments"]
                .as_str()
                .unwrap_or("{}")
                .to_owned(),
        })
        .collect::<Vec<_>>();
    let usage = value.get("usage").filter(|u| !u.is_null()).map(|u| Usage {
        input: u["prompt_tokens"].as_u64().unwrap_or(0),
        output: u["completion_tokens"].as_u64().unwrap_or(0),
    });
    let mut thoughts = ThinkSplitter::default();
    let mut pieces = thoughts.push(message["content"].as_str().unwrap_or_default());
    pieces.extend(thoughts.finish());
    let text = pieces
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Text(text) => Some(text),
            Piece::Reasoning(_) => None,
        })
        .collect();
    Ok(Reply {
        text,
        stop: choice["finish_reason"]
            .as_str()
            .map(stop_reason)
            .unwrap_or(StopReason::End),
        tool_calls,
        usage,
    })
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::End,
        "tool_calls" | "function_call" => StopReason::ToolCalls,
        "length" => StopReason::Length,
        other => StopReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversations_take_openai_shape() {
        let messages = vec![
            Message::text(Role::System, "be brief"),
            Message::text(Role::User, "list files"),
            Message::assistant(
                "",
                vec![ToolCall {
                    id: "c1".into(),
                    name: "fs__list".into(),
                    arguments: "{}".into(),
                }],
            ),
            Message::tool_result("c1", "a.txt"),
        ];
        let tools = vec![ToolDefinition {
            name: "fs__list".into(),
            description: "List".into(),
            parameters: json!({"type": "object"}),
        }];
        let body = request_body("m", &messages, &tools, false);
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["name"],
            "fs__list"
        );
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt"})
        );
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(body["stream"], true);
        assert!(
            request_body("m", &messages, &[], false)
                .get("tools")
                .is_none()
        );
        let silent = request_body("m", &[Message::assistant("", Vec::new())], &[], false);
        assert_eq!(
            silent["messages"][0],
            json!({"role": "assistant", "content": ""})
        );
    }

    #[test]
    fn the_output_cap_is_named_for_the_server() {
        assert_eq!(
            max_tokens_field("https://api.openai.com/v1"),
            "max_completion_tokens"
        );
        assert_eq!(max_tokens_field("http://localhost:11434/v1"), "max_tokens");
    }

    #[test]
    fn gemini_endpoints_get_gemini_schemas() {
        let at = |base_url: &str| {
            let endpoint = Endpoint {
                base_url: base_url.into(),
                api_key: None,
            };
            OpenAiCompatible::new(endpoint, "m")
                .unwrap()
                .schema_dialect()
        };
        assert_eq!(
            at("https://generativelanguage.googleapis.com/v1beta/openai"),
            SchemaDialect::Gemini
        );
        assert_eq!(at("http://localhost:11434/v1"), SchemaDialect::OpenAi);
    }

    /// Two calls of one turn, the first with an image: the image follows both tool
    /// messages, for a model that accepts images, and is left out otherwise.
    #[test]
    fn images_of_tool_results_follow_the_turn_in_a_user_message() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "shot".into(),
            arguments: "{}".into(),
        };
        let mut shot = Message::tool_result("c1", "[an image, image/png]");
        shot.images.push(Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        });
        let messages = vec![
            Message::text(Role::User, "look"),
            Message::assistant("", vec![call("c1"), call("c2")]),
            shot,
            Message::tool_result("c2", "no image"),
        ];
        let body = request_body("m", &messages, &[], true);
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool", "user"]);
        assert_eq!(
            body["messages"][4]["content"],
            json!([
                {"type": "text", "text": "Image(s) returned by tool call c1:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
            ])
        );
        assert_eq!(body["messages"][2]["content"], "[an image, image/png]");
        let blind = request_body("m", &messages, &[], false);
        assert_eq!(blind["messages"].as_array().unwrap().len(), 4);
    }
}
