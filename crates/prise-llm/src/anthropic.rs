//! The native Anthropic Messages client, streaming.

use std::collections::BTreeMap;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::error::ModelError;
use crate::retry::RetryPolicy;
use crate::send::{ClientOptions, complete_with_retries, content_type, http_client, not_the_api};
use crate::spec::Endpoint;
use crate::types::{
    Image, Message, ModelEvent, Reply, Role, StopReason, ToolCall, ToolDefinition, Usage,
};

/// The API version prise speaks.
const VERSION: &str = "2023-06-01";
/// Output tokens asked for per turn unless configured (the API requires a number).
const MAX_TOKENS: u64 = 8192;

/// A client for one Anthropic model.
#[derive(Debug, Clone)]
pub struct Anthropic {
    client: reqwest::Client,
    endpoint: Endpoint,
    model: String,
    retry: RetryPolicy,
    images: bool,
    max_output_tokens: u64,
    sampling: crate::Sampling,
}

impl Anthropic {
    /// A client for `model` at `endpoint` (`https://api.anthropic.com/v1` and a key),
    /// with the default options.
    pub fn new(endpoint: Endpoint, model: impl Into<String>) -> Result<Anthropic, ModelError> {
        Anthropic::with_options(endpoint, model, ClientOptions::default())
    }

    /// A client for `model` at `endpoint` with `options`.
    pub fn with_options(
        endpoint: Endpoint,
        model: impl Into<String>,
        options: ClientOptions,
    ) -> Result<Anthropic, ModelError> {
        Ok(Anthropic {
            client: http_client(options.idle_timeout)?,
            endpoint,
            model: model.into(),
            retry: RetryPolicy::default(),
            images: true,
            max_output_tokens: options.max_output_tokens.unwrap_or(MAX_TOKENS),
            sampling: options.sampling,
        })
    }

    /// Whether to send images (every Claude model reads them, so yes unless told).
    pub fn with_images(mut self, images: bool) -> Anthropic {
        self.images = images;
        self
    }

    /// Replaces the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Anthropic {
        self.retry = retry;
        self
    }

    /// One model turn, as [`crate::OpenAiCompatible::complete`].
    pub async fn complete(
        &self,
        messages: &[Message],
        tools: &[ToolDefinition],
        events: &mut (dyn FnMut(ModelEvent) + Send),
    ) -> Result<Reply, ModelError> {
        let mut body = request_body(&self.model, messages, tools, self.images);
        body["max_tokens"] = self.max_output_tokens.into();
        // Anthropic takes no seed.
        if let Some(t) = self.sampling.temperature {
            body["temperature"] = t.into();
        }
        if let Some(p) = self.sampling.top_p {
            body["top_p"] = p.into();
        }
        if let (Some(choice), false) = (self.sampling.tool_choice, tools.is_empty()) {
            let kind = match choice {
                crate::ToolChoice::Auto => "auto",
                crate::ToolChoice::Required => "any",
                crate::ToolChoice::None => "none",
            };
            body["tool_choice"] = json!({"type": kind});
        }
        let mut headers = vec![("anthropic-version", VERSION.to_owned())];
        if let Some(key) = &self.endpoint.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        let url = format!("{}/messages", self.endpoint.base_url);
        complete_with_retries(
            &self.client,
            &url,
            &body,
            &headers,
            &self.retry,
            events,
            |response, events| Box::pin(read_stream(response, events)),
        )
        .await
    }
}

/// The request: system text apart, tool results as user messages of `tool_result`
/// blocks (consecutive ones merged, as the API wants one user turn between assistant
/// turns).
fn request_body(
    model: &str,
    messages: &[Message],
    tools: &[ToolDefinition],
    images: bool,
) -> Value {
    let images = |message: &Message| {
        message
            .images
            .iter()
            .filter(|_| images)
            .map(image_block)
            .collect::<Vec<_>>()
    };
    let system: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.text.as_str())
        .collect();
    let mut turns: Vec<Value> = Vec::new();
    for message in messages.iter().filter(|m| m.role != Role::System) {
        let (role, blocks) = match message.role {
            Role::User => {
                let mut blocks = vec![json!({"type": "text", "text": message.text})];
                blocks.extend(images(message));
                ("user", blocks)
            }
            Role::Tool if images(message).is_empty() => (
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.text}),
                ],
            ),
            Role::Tool => {
                let mut content = vec![json!({"type": "text", "text": message.text})];
                content.extend(images(message));
                (
                    "user",
                    vec![
                        json!({"type": "tool_result", "tool_use_id": message.tool_call_id, "content": content}),
                    ],
                )
            }
            _ => {
                let mut blocks = Vec::new();
                if !message.text.is_empty() {
                    blocks.push(json!({"type": "text", "text": message.text}));
                }
                for call in &message.tool_calls {
                    let input: Value =
                        serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                }
                ("assistant", blocks)
            }
        };
        // A model that answered nothing leaves no turn: the API refuses empty ones,
        // and the user turns around it merge.
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(blocks);
                }
            }
            _ => turns.push(json!({"role": role, "content": blocks})),
        }
    }
    let mut body =
        json!({"model": model, "max_tokens": MAX_TOKENS, "messages": turns, "stream": true});
    if !system.is_empty() {
        body["system"] = system.join("\n\n").into();
    }
    if !tools.is_empty() {
        body["tools"] =
            tools.iter().map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters})).collect();
    }
    body
}

/// Every Claude model reads images, inside tool results too.
fn image_block(image: &Image) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}})
}

/// A content block being assembled.
enum Block {
    Text,
    Tool {
        id: String,
        name: String,
        input: String,
    },
}

async fn read_stream(
    response: reqwest::Response,
    events: &mut (dyn FnMut(ModelEvent) + Send),
) -> Result<Reply, ModelError> {
    let content_type = content_type(&response);
    if !content_type.starts_with("text/event-stream") {
        return Err(not_the_api(&content_type));
    }
    let mut stream = sse_stream::SseStream::new(http::Response::from(response).into_body());
    let mut text = String::new();
    let mut blocks: BTreeMap<u64, Block> = BTreeMap::new();
    let mut stop = StopReason::End;
    let mut usage = Usage::default();
    let mut watch = crate::degenerate::Watch::default();
    while let Some(event) = stream.next().await {
        let event = event.map_err(|e| ModelError::Interrupted(format!("the stream broke: {e}")))?;
        let Some(data) = event.data else { continue };
        if data.trim() == "[DONE]" {
            break;
        }
        let event: Value = serde_json::from_str(&data)
            .map_err(|e| ModelError::Protocol(format!("bad event {data:?}: {e}")))?;
        let index = event["index"].as_u64().unwrap_or(0);
        match event["type"].as_str().unwrap_or_default() {
            "message_start" => {
                usage.input = event["message"]["usage"]["input_tokens"]
                    .as_u64()
                    .unwrap_or(0)
            }
            "content_block_start" => {
                let block = &event["content_block"];
                let started = match block["type"].as_str() {
                    Some("tool_use") => Block::Tool {
                        id: block["id"].as_str().unwrap_or_default().to_owned(),
                        name: block["name"].as_str().unwrap_or_default().to_owned(),
                        input: String::new(),
                    },
                    _ => Block::Text,
                };
                blocks.insert(index, started);
            }
            "content_block_delta" => {
                let delta = &event["delta"];
                match (delta["type"].as_str(), blocks.get_mut(&index)) {
                    (Some("text_delta"), _) => {
                        let piece = delta["text"].as_str().unwrap_or_default();
                        text.push_str(piece);
                        events(ModelEvent::TextDelta(piece.to_owned()));
                        if let Some(how) = watch.push(piece) {
                            stop = StopReason::Degenerate(how);
                            break;
                        }
                    }
                    (Some("input_json_delta"), Some(Block::Tool { input, .. })) => {
                        input.push_str(delta["partial_json"].as_str().unwrap_or_default())
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                stop = match event["delta"]["stop_reason"].as_str() {
                    Some("end_turn") | Some("stop_sequence") | None => StopReason::End,
                    Some("tool_use") => StopReason::ToolCalls,
                    Some("max_tokens") => StopReason::Length,
                    Some(other) => StopReason::Other(other.to_owned()),
                };
                usage.output = event["usage"]["output_tokens"]
                    .as_u64()
                    .unwrap_or(usage.output);
            }
            "message_stop" => break,
            "error" => {
                let message = event["error"]["message"]
                    .as_str()
                    .unwrap_or("unknown error")
                    .to_owned();
                // Overloaded, rate-limited or a server error may pass; a bad request
                // will not.
                return Err(match event["error"]["type"].as_str() {
                    Some("overloaded_error" | "api_error" | "rate_limit_error") => {
                        ModelError::Interrupted(message)
                    }
                    _ => ModelError::Protocol(format!(
                        "the model reported an error mid-stream: {message}"
                    )),
                });
            }
            _ => {} // ping, content_block_stop
        }
    }
    let tool_calls = blocks
        .into_values()
        .filter_map(|block| match block {
            Block::Tool { id, name, input } => Some(ToolCall {
                id,
                name,
                arguments: if input.is_empty() {
                    "{}".to_owned()
                } else {
                    input
                },
            }),
            Block::Text => None,
        })
        .collect();
    Ok(Reply {
        text,
        tool_calls,
        stop,
        usage: Some(usage),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversations_take_anthropic_shape() {
        let messages = vec![
            Message::text(Role::System, "be brief"),
            Message::text(Role::User, "read two files"),
            Message::assistant(
                "",
                vec![
                    ToolCall {
                        id: "t1".into(),
                        name: "fs__read".into(),
                        arguments: r#"{"path":"a"}"#.into(),
                    },
                    ToolCall {
                        id: "t2".into(),
                        name: "fs__read".into(),
                        arguments: r#"{"path":"b"}"#.into(),
                    },
                ],
            ),
            Message::tool_result("t1", "A"),
            Message::tool_result("t2", "B"),
        ];
        let body = request_body("claude-x", &messages, &[], true);
        assert_eq!(body["system"], "be brief");
        let turns = body["messages"].as_array().unwrap();
        assert_eq!(turns.len(), 3);
        assert_eq!(
            turns[1]["content"][1],
            json!({"type": "tool_use", "id": "t2", "name": "fs__read", "input": {"path": "b"}})
        );
        // Both results in one user turn.
        assert_eq!(turns[2]["role"], "user");
        assert_eq!(turns[2]["content"].as_array().unwrap().len(), 2);
        assert_eq!(turns[2]["content"][0]["tool_use_id"], "t1");
    }

    #[test]
    fn an_empty_answer_leaves_no_empty_turn() {
        let messages = [
            Message::text(Role::User, "hi"),
            Message::assistant("", Vec::new()),
            Message::text(Role::User, "hello?"),
        ];
        let body = request_body("claude-x", &messages, &[], true);
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "hello?"}]}])
        );
    }

    #[test]
    fn images_go_inside_tool_results() {
        let mut shot = Message::tool_result("t1", "[an image, image/png]");
        shot.images.push(Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        });
        let body = request_body("claude-x", std::slice::from_ref(&shot), &[], true);
        assert_eq!(
            body["messages"][0]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "t1", "content": [
                {"type": "text", "text": "[an image, image/png]"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
            ]})
        );
        let blind = request_body("claude-x", &[shot], &[], false);
        assert_eq!(
            blind["messages"][0]["content"][0]["content"],
            "[an image, image/png]"
        );
    }
}
