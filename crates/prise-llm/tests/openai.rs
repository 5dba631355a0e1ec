//! The OpenAI-compatible client against the scripted model double: streaming, tool
//! calls, retries, and what it sends.

mod scripted_model;

use std::time::Duration;

use prise_llm::{
    ClientOptions, Endpoint, Message, ModelError, ModelEvent, OpenAiCompatible, RetryPolicy, Role,
    StopReason, ToolDefinition,
};
use scripted_model::{Scripted, ScriptedModel};
use serde_json::json;

fn client(url: &str, key: Option<&str>) -> OpenAiCompatible {
    client_with(url, key, ClientOptions::default())
}

fn client_with(url: &str, key: Option<&str>, options: ClientOptions) -> OpenAiCompatible {
    let endpoint = Endpoint {
        base_url: url.to_owned(),
        api_key: key.map(str::to_owned),
    };
    // Short waits, so that retry tests stay fast; Retry-After is still honoured.
    OpenAiCompatible::with_options(endpoint, "fake-model", options)
        .unwrap()
        .with_retry(RetryPolicy {
            first: Duration::from_millis(10),
            cap: Duration::from_secs(2),
            max_tries: 5,
        })
}

fn delta(content: &str) -> serde_json::Value {
    json!({"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]})
}

#[tokio::test]
async fn streamed_text_is_reassembled_and_the_request_is_what_openai_expects() {
    let model = ScriptedModel::start(vec![Scripted::Stream(vec![
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
        delta("Hel"),
        delta("lo"),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}),
    ])])
    .await;
    let mut deltas = Vec::new();
    let tools = [ToolDefinition {
        name: "docs__grep_docs".into(),
        description: "Search".into(),
        parameters: json!({"type": "object"}),
    }];
    let reply = client(&model.url, Some("sk-test"))
        .complete(&[Message::text(Role::User, "hi")], &tools, &mut |e| {
            if let ModelEvent::TextDelta(t) = e {
                deltas.push(t)
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.text, "Hello");
    assert_eq!(deltas, ["Hel", "lo"]);
    assert_eq!(reply.stop, StopReason::End);
    assert_eq!(reply.usage.map(|u| (u.input, u.output)), Some((12, 3)));
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(requests[0].body["model"], "fake-model");
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(
        requests[0].body["messages"],
        json!([{"role": "user", "content": "hi"}])
    );
    assert_eq!(
        requests[0].body["tools"][0]["function"]["name"],
        "docs__grep_docs"
    );
}

#[tokio::test]
async fn parallel_tool_calls_are_assembled_by_index() {
    let call = |index: u64, id: Option<&str>, name: Option<&str>, arguments: &str| {
        let mut function = json!({"arguments": arguments});
        if let Some(name) = name {
            function["name"] = name.into();
        }
        let mut call = json!({"index": index, "function": function});
        if let Some(id) = id {
            call["id"] = id.into();
            call["type"] = "function".into();
        }
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    };
    let model = ScriptedModel::start(vec![Scripted::Stream(vec![
        call(0, Some("call_a"), Some("fs__read"), ""),
        call(1, Some("call_b"), Some("time__now"), "{\"tz\":"),
        call(0, None, None, "{\"path\":"),
        call(1, None, None, "\"UTC\"}"),
        call(0, None, None, "\"a.txt\"}"),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ])])
    .await;
    let reply = client(&model.url, None)
        .complete(&[Message::text(Role::User, "go")], &[], &mut |_| {})
        .await
        .unwrap();
    assert_eq!(reply.stop, StopReason::ToolCalls);
    let calls: Vec<(&str, &str, &str)> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", "fs__read", r#"{"path":"a.txt"}"#),
            ("call_b", "time__now", r#"{"tz":"UTC"}"#)
        ]
    );
    assert!(model.requests()[0].header("authorization").is_none());
}

#[tokio::test]
async fn reasoning_is_set_apart_from_the_answer() {
    // Qwen3 through a server without a reasoning parser: thoughts inline; then a
    // server with one (reasoning_content, as vLLM and llama.cpp name it).
    let model = ScriptedModel::start(vec![
        Scripted::Stream(vec![
            delta("<thi"),
            delta("nk>Maybe 3?"),
            delta(" No.</think>\n\n"),
            delta("It is 4."),
        ]),
        Scripted::Stream(vec![
            json!({"choices": [{"index": 0, "delta": {"reasoning_content": "Two and two."}}]}),
            delta("4"),
        ]),
    ])
    .await;
    for expected in ["It is 4.", "4"] {
        let mut thoughts = String::new();
        let mut shown = String::new();
        let reply = client(&model.url, None)
            .complete(
                &[Message::text(Role::User, "2+2?")],
                &[],
                &mut |e| match e {
                    ModelEvent::ReasoningDelta(t) => thoughts.push_str(&t),
                    ModelEvent::TextDelta(t) => shown.push_str(&t),
                    _ => {}
                },
            )
            .await
            .unwrap();
        assert_eq!(reply.text, expected);
        assert_eq!(shown, expected);
        assert!(
            thoughts == "Maybe 3? No." || thoughts == "Two and two.",
            "{thoughts:?}"
        );
    }
}

#[tokio::test]
async fn a_web_page_instead_of_the_api_is_one_clear_error_not_retried() {
    let model = ScriptedModel::start(vec![Scripted::Page("<html>Welcome to nginx!</html>")]).await;
    let error = client(&model.url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model's reply could not be read: the endpoint answered with text/html, not the model's stream; is the base URL the API's (it usually ends in /v1)?"
    );
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_silent_endpoint_is_given_up_after_the_idle_timeout() {
    let model = ScriptedModel::start(vec![
        Scripted::Silence,
        Scripted::Stream(vec![delta("awake")]),
    ])
    .await;
    let options = ClientOptions {
        idle_timeout: Duration::from_millis(300),
        ..ClientOptions::default()
    };
    let client = client_with(&model.url, None, options);
    let mut retries = Vec::new();
    let reply = client
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |e| {
            if let ModelEvent::Retrying { reason, .. } = e {
                retries.push(reason)
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.text, "awake");
    assert_eq!(retries, ["the endpoint stopped answering"]);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn the_output_cap_is_sent() {
    let model = ScriptedModel::start(vec![Scripted::Stream(vec![delta("ok")])]).await;
    let options = ClientOptions {
        max_output_tokens: Some(64),
        ..ClientOptions::default()
    };
    client_with(&model.url, None, options)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |_| {})
        .await
        .unwrap();
    let body = &model.requests()[0].body;
    assert_eq!(body["max_tokens"], 64);
    assert!(body.get("max_completion_tokens").is_none());
}

/// Some compatible servers repeat the id and the name in every delta of a call.
#[tokio::test]
async fn repeated_ids_and_names_are_not_doubled() {
    let chunk = |arguments: &str| {
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_x", "type": "function",
            "function": {"name": "fs__read", "arguments": arguments}}]}}]})
    };
    let model = ScriptedModel::start(vec![Scripted::Stream(vec![
        chunk("{\"path\":"),
        chunk("\"a.txt\"}"),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ])])
    .await;
    let reply = client(&model.url, None)
        .complete(&[Message::text(Role::User, "go")], &[], &mut |_| {})
        .await
        .unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    let call = &reply.tool_calls[0];
    assert_eq!(
        (
            call.id.as_str(),
            call.name.as_str(),
            call.arguments.as_str()
        ),
        ("call_x", "fs__read", r#"{"path":"a.txt"}"#)
    );
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_servers_delay() {
    let model = ScriptedModel::start(vec![
        Scripted::Status(
            429,
            vec![("Retry-After", "1")],
            r#"{"error": {"message": "slow down"}}"#,
        ),
        Scripted::Stream(vec![delta("ok")]),
    ])
    .await;
    let mut retries = Vec::new();
    let reply = client(&model.url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |e| {
            if let ModelEvent::Retrying {
                attempt,
                reason,
                delay,
            } = e
            {
                retries.push((attempt, reason, delay))
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.text, "ok");
    assert_eq!(model.requests().len(), 2);
    assert_eq!(
        retries,
        [(1, "HTTP 429: slow down".to_owned(), Duration::from_secs(1))]
    );
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff_until_the_limit() {
    let unavailable = || Scripted::Status(503, vec![], r#"{"error": {"message": "overloaded"}}"#);
    let model = ScriptedModel::start(vec![
        unavailable(),
        unavailable(),
        Scripted::Stream(vec![delta("third time")]),
    ])
    .await;
    let reply = client(&model.url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |_| {})
        .await
        .unwrap();
    assert_eq!(reply.text, "third time");
    assert_eq!(model.requests().len(), 3);

    let model = ScriptedModel::start((0..5).map(|_| unavailable()).collect()).await;
    let error = client(&model.url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(error, ModelError::GaveUp { attempts: 5, .. }),
        "{error}"
    );
    assert_eq!(model.requests().len(), 5);
}

#[tokio::test]
async fn a_stream_that_breaks_off_before_any_text_is_asked_again() {
    let broken = || {
        Scripted::Stream(vec![
            json!({"error": {"message": "Provider overloaded", "code": 502}}),
        ])
    };
    let model = ScriptedModel::start(vec![broken(), Scripted::Stream(vec![delta("fine")])]).await;
    let mut retries = Vec::new();
    let reply = client(&model.url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |e| {
            if let ModelEvent::Retrying { reason, .. } = e {
                retries.push(reason)
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.text, "fine");
    assert_eq!(retries, ["Provider overloaded"]);
    assert_eq!(model.requests().len(), 2);

    // Once text was shown, asking again would show it twice: the error stands.
    let model = ScriptedModel::start(vec![
        Scripted::Stream(vec![
            delta("Half an ans"),
            json!({"error": {"message": "Provider overloaded"}}),
        ]),
        Scripted::Stream(vec![delta("never asked")]),
    ])
    .await;
    let error = client(&model.url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model's reply broke off: Provider overloaded"
    );
    assert_eq!(model.requests().len(), 1);

    // A bad request reported mid-stream is not repeated.
    let model = ScriptedModel::start(vec![Scripted::Stream(vec![
        json!({"error": {"message": "context too long", "type": "invalid_request_error"}}),
    ])])
    .await;
    let error = client(&model.url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |_| {})
        .await
        .unwrap_err();
    assert!(matches!(error, ModelError::Protocol(_)), "{error}");
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_bad_request_is_not_retried() {
    let model = ScriptedModel::start(vec![Scripted::Status(
        400,
        vec![],
        r#"{"error": {"message": "unknown model fake-model"}}"#,
    )])
    .await;
    let error = client(&model.url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the model endpoint {}/chat/completions answered HTTP 400: unknown model fake-model",
            model.url
        )
    );
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn an_unreachable_endpoint_is_one_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let error = client(&url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |_| {})
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "cannot reach the model at {url}/chat/completions: "
        )),
        "{message}"
    );
    assert!(message.contains("refused"), "{message}");
    assert!(error.hint().unwrap().contains("--base-url"));
}

#[tokio::test]
async fn a_server_that_ignores_stream_still_works() {
    let model = ScriptedModel::start(vec![Scripted::Json(json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1}
    }))])
    .await;
    let mut deltas = Vec::new();
    let reply = client(&model.url, None)
        .complete(&[Message::text(Role::User, "hi")], &[], &mut |e| {
            if let ModelEvent::TextDelta(t) = e {
                deltas.push(t)
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.text, "whole");
    assert_eq!(deltas, ["whole"]);
}
