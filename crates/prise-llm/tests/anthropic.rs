//! The Anthropic Messages client against the scripted model double, replaying the
//! events of Anthropic's stream: text, a tool call, the headers it must send.

mod scripted_model;

use prise_llm::{Anthropic, Endpoint, Message, ModelEvent, Role, StopReason, ToolDefinition};
use scripted_model::{Scripted, ScriptedModel};
use serde_json::json;

#[tokio::test]
async fn text_and_a_tool_call_from_the_event_stream() {
    let model = ScriptedModel::start(vec![Scripted::Stream(vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 25, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "check."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "time__now", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"tz\": "}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"UTC\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 17}}),
        json!({"type": "message_stop"}),
    ])])
    .await;
    let endpoint = Endpoint {
        base_url: model.url.clone(),
        api_key: Some("sk-ant-test".into()),
    };
    let tools = [ToolDefinition {
        name: "time__now".into(),
        description: "Now".into(),
        parameters: json!({"type": "object"}),
    }];
    let mut deltas = Vec::new();
    let reply = Anthropic::new(endpoint, "claude-test")
        .unwrap()
        .complete(
            &[
                Message::text(Role::System, "sys"),
                Message::text(Role::User, "time?"),
            ],
            &tools,
            &mut |e| {
                if let ModelEvent::TextDelta(t) = e {
                    deltas.push(t)
                }
            },
        )
        .await
        .unwrap();
    assert_eq!(reply.text, "Let me check.");
    assert_eq!(deltas, ["Let me ", "check."]);
    assert_eq!(reply.stop, StopReason::ToolCalls);
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(
        (
            reply.tool_calls[0].id.as_str(),
            reply.tool_calls[0].arguments.as_str()
        ),
        ("toolu_1", r#"{"tz": "UTC"}"#)
    );
    assert_eq!(reply.usage.map(|u| (u.input, u.output)), Some((25, 17)));
    let request = &model.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.body["system"], "sys");
    assert_eq!(
        request.body["tools"][0]["input_schema"],
        json!({"type": "object"})
    );
    assert_eq!(
        request.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "time?"}]}])
    );
}

/// Anthropic reports overload inside a 200 stream, as an `error` event: asked again.
#[tokio::test]
async fn an_overloaded_event_before_any_text_is_retried() {
    let model = ScriptedModel::start(vec![
        Scripted::Stream(vec![
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ]),
        Scripted::Stream(vec![
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Here."}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
            json!({"type": "message_stop"}),
        ]),
    ])
    .await;
    let endpoint = Endpoint {
        base_url: model.url.clone(),
        api_key: Some("sk-ant-test".into()),
    };
    let mut retries = 0;
    let reply = Anthropic::new(endpoint, "claude-test")
        .unwrap()
        .with_retry(prise_llm::RetryPolicy {
            first: std::time::Duration::from_millis(10),
            cap: std::time::Duration::from_secs(1),
            max_tries: 3,
        })
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |e| {
            if matches!(e, ModelEvent::Retrying { .. }) {
                retries += 1;
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.text, "Here.");
    assert_eq!(retries, 1);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_web_page_instead_of_the_api_is_an_error_not_an_empty_answer() {
    let model = ScriptedModel::start(vec![Scripted::Page("<html>It works!</html>")]).await;
    let endpoint = Endpoint {
        base_url: model.url.clone(),
        api_key: Some("sk-ant-test".into()),
    };
    let error = Anthropic::new(endpoint, "claude-test")
        .unwrap()
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("answered with text/html, not the model's stream"),
        "{error}"
    );
    assert_eq!(model.requests().len(), 1);
}
