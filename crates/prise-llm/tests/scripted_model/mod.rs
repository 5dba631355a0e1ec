//! A TEST DOUBLE for an OpenAI-compatible model endpoint, because these machines can
//! reach no model service. It replays scripted HTTP responses in order and records
//! every request it receives, so that tests assert on what prise sent, not only on
//! what it got back. It lives in the test tree and is never part of prise.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One scripted answer.
pub enum Scripted {
    /// A streamed completion: each value is one `data:` event, then `[DONE]`.
    Stream(Vec<Value>),
    /// A plain JSON body with status 200.
    Json(Value),
    /// An HTML page with status 200, as a web server at the wrong URL answers.
    Page(&'static str),
    /// No answer at all: the connection stays open and silent for a minute.
    Silence,
    /// An error status, with extra headers and a body.
    Status(u16, Vec<(&'static str, &'static str)>, &'static str),
}

/// A request as the double received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The text of every tool message of an OpenAI-shaped request, in order.
    pub fn tool_results(&self) -> Vec<String> {
        self.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect()
    }
}

impl Scripted {
    /// An OpenAI-style streamed turn calling one tool.
    pub fn tool_call(id: &str, name: &str, arguments: Value) -> Scripted {
        Scripted::tool_calls(&[(id, name, arguments)])
    }

    /// An OpenAI-style streamed turn calling several tools at once.
    pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Scripted {
        let deltas = calls
            .iter()
            .enumerate()
            .map(|(index, (id, name, arguments))| {
                serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}}]}}]})
            })
            .chain([serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})])
            .collect();
        Scripted::Stream(deltas)
    }

    /// An OpenAI-style streamed final answer.
    pub fn answer(text: &str) -> Scripted {
        Scripted::Stream(vec![
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]}),
            serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ])
    }
}

/// The running double.
pub struct ScriptedModel {
    /// Its base URL, ending in `/v1`.
    pub url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedModel {
    /// Listens on a free loopback port and answers with `script`, in order; a request
    /// past the end of the script gets a 500 saying so.
    pub async fn start(script: Vec<Scripted>) -> ScriptedModel {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let Some(request) = read_request(&mut socket).await else {
                    continue;
                };
                recorded.lock().unwrap().push(request);
                let next = script.lock().unwrap().pop_front();
                if let Some(Scripted::Silence) = next {
                    tokio::spawn(async move {
                        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                        drop(socket);
                    });
                    continue;
                }
                let _ = socket.write_all(&render(next)).await;
                let _ = socket.shutdown().await;
            }
        });
        ScriptedModel {
            url,
            requests,
            task,
        }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Recorded> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.lines();
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buffer[head_end..]).unwrap_or(Value::Null);
    Some(Recorded {
        path,
        headers,
        body,
    })
}

fn render(answer: Option<Scripted>) -> Vec<u8> {
    let (status, headers, body) = match answer {
        Some(Scripted::Stream(events)) => {
            let mut body = String::new();
            for event in events {
                body.push_str(&format!("data: {event}\n\n"));
            }
            body.push_str("data: [DONE]\n\n");
            (200, vec![("Content-Type", "text/event-stream")], body)
        }
        Some(Scripted::Json(value)) => (
            200,
            vec![("Content-Type", "application/json")],
            value.to_string(),
        ),
        Some(Scripted::Silence) => unreachable!("answered by not answering"),
        Some(Scripted::Page(html)) => (200, vec![("Content-Type", "text/html")], html.to_owned()),
        Some(Scripted::Status(status, headers, body)) => {
            let mut headers = headers;
            headers.push(("Content-Type", "application/json"));
            (status, headers, body.to_owned())
        }
        None => (
            500,
            vec![("Content-Type", "text/plain")],
            "the script is exhausted".to_owned(),
        ),
    };
    let mut out = format!(
        "HTTP/1.1 {status} Scripted\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&body);
    out.into_bytes()
}
