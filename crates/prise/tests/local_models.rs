//! Small local models as they really write tool calls, replayed through the scripted
//! model double (these machines reach no model service) against real MCP servers:
//! the weather server of the seed article (Python SDK) and mcp-server-time. The
//! tests assert the exact calls that ran, in order, and that no invented one did.

mod common;
#[path = "../../prise-llm/tests/scripted_model/mod.rs"]
mod scripted_model;

use std::path::Path;
use std::process::Output;

use common::peers;
use scripted_model::{Scripted, ScriptedModel};
use serde_json::{Value, json};

/// Writes a configuration with the weather and time servers.
fn weather_and_time(home: &Path, model: Value) {
    let weather =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../prise-mcp/tests/fixtures/weather_server.py");
    std::fs::write(
        home.join(".mcp.json"),
        json!({
            "mcpServers": {
                "weather": {"command": peers().join("venv/bin/python"), "args": [weather]},
                "time": {"command": peers().join("venv/bin/mcp-server-time"), "args": ["--local-timezone", "UTC"]}
            },
            "model": model
        })
        .to_string(),
    )
    .unwrap();
}

async fn prise(home: &Path, args: Vec<String>, stdin: &str) -> Output {
    let (home, stdin) = (home.to_owned(), stdin.to_owned());
    tokio::task::spawn_blocking(move || {
        common::prise(&home)
            .args(args)
            .write_stdin(stdin)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn args(model: &ScriptedModel, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "-m",
        "openai-compatible:fake",
        "--base-url",
        &model.url,
        "--yes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// What a reply means: the calls it makes, or that it tried and failed (the model is
/// told how to call), or a plain answer.
enum Means {
    Calls(Vec<(&'static str, Value)>),
    Failed,
    Answer,
}

/// Every form of the recovery corpus, through one chat against the real servers: one
/// question a reply.
#[tokio::test]
async fn every_form_runs_exactly_its_calls_against_real_servers() {
    use Means::*;
    let w = |city: &str| ("weather__get_weather", json!({"city": city}));
    let t = |zone: &str| ("time__get_current_time", json!({"timezone": zone}));
    let corpus: Vec<(&str, Means)> = vec![
        (
            "<tools>\n{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"shanghai\"}}\n{\"name\": \"time__get_current_time\", \"arguments\": {\"timezone\": \"Asia/Shanghai\"}}\n</tools>",
            Calls(vec![w("shanghai"), t("Asia/Shanghai")]),
        ),
        (
            "```json\n{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"beijing\"}}\n{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"guangzhou\"}}\n```",
            Calls(vec![w("beijing"), w("guangzhou")]),
        ),
        (
            "<tool name=\"weather__get_weather\" arguments='{\"city\": \"shanghai\"}'/>",
            Calls(vec![w("shanghai")]),
        ),
        (
            "<function name=\"time__get_current_time\" arguments='{\"timezone\": \"UTC\"}'/>",
            Calls(vec![t("UTC")]),
        ),
        (
            "I will check. <response>{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"beijing\"}}</response>",
            Calls(vec![w("beijing")]),
        ),
        (
            "{{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"guangzhou\"}}}",
            Calls(vec![w("guangzhou")]),
        ),
        (
            "weather__get_weather(city=\"shanghai\")",
            Calls(vec![w("shanghai")]),
        ),
        (
            "<tool_call>\n{\"name\": \"time__get_current_time\", \"arguments\": {\"timezone\": \"Europe/Paris\"}}\n</tool_call>",
            Calls(vec![t("Europe/Paris")]),
        ),
        (
            "<|python_tag|>{\"name\": \"weather__get_weather\", \"parameters\": {\"city\": \"beijing\"}}<|eom_id|>",
            Calls(vec![w("beijing")]),
        ),
        (
            "[TOOL_CALLS][{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"shanghai\"}}]",
            Calls(vec![w("shanghai")]),
        ),
        (
            "[weather__get_weather(city='beijing'), time__get_current_time(timezone='Asia/Shanghai')]",
            Calls(vec![w("beijing"), t("Asia/Shanghai")]),
        ),
        (
            "<tool_call>\n<function=weather__get_weather>\n<parameter=city>\nguangzhou\n</parameter>\n</function>\n</tool_call>",
            Calls(vec![w("guangzhou")]),
        ),
        (
            "<|tool_call|>[{\"name\": \"time__get_current_time\", \"arguments\": {\"timezone\": \"UTC\"}}]",
            Calls(vec![t("UTC")]),
        ),
        (
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>weather__get_weather\n```json\n{\"city\": \"shanghai\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            Calls(vec![w("shanghai")]),
        ),
        (
            "functools[{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"beijing\"}}]",
            Calls(vec![w("beijing")]),
        ),
        (
            "```tool_code\nweather__get_weather(city=\"guangzhou\")\n```",
            Calls(vec![w("guangzhou")]),
        ),
        // The same call twice in one reply runs once; the tool's own name is enough.
        (
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"shanghai\"}}</tool_call>\n{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"shanghai\"}}",
            Calls(vec![w("shanghai")]),
        ),
        // A call, then a response the model made up, then a call it never got to make.
        (
            "<tool_call>{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"beijing\"}}</tool_call>\n<tool_response>{\"temp\": 30}</tool_response>\n<tool_call>{\"name\": \"time__get_current_time\", \"arguments\": {\"timezone\": \"UTC\"}}</tool_call>",
            Calls(vec![w("beijing")]),
        ),
        // The model invented the result: nothing runs, and it is told how to call.
        (
            "Let's assume the result is: {\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"shanghai\"}, \"result\": {\"temp\": 15}}",
            Failed,
        ),
        ("<tools>\n</tools>", Failed),
        (
            "It is cloudy in shanghai; I used weather__get_weather to check.",
            Answer,
        ),
    ];
    let mut script = Vec::new();
    let mut questions = String::new();
    for (i, (reply, means)) in corpus.iter().enumerate() {
        script.push(Scripted::answer(reply));
        if !matches!(means, Answer) {
            script.push(Scripted::answer(&format!("answer {i}")));
        }
        questions.push_str(&format!("question {i}\n"));
    }
    let model = ScriptedModel::start(script).await;
    let home = tempfile::tempdir().unwrap();
    weather_and_time(home.path(), json!({}));
    let mut chat = vec!["chat".to_owned()];
    chat.extend(args(&model, &[]));
    let out = prise(home.path(), chat, &questions).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The whole conversation, as the model last saw it.
    let requests = model.requests();
    let messages = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .clone();
    for (i, (reply, means)) in corpus.iter().enumerate() {
        let question = format!("question {i}");
        let start = messages
            .iter()
            .position(|m| m["content"] == question.as_str())
            .unwrap();
        let end = messages[start + 1..]
            .iter()
            .position(|m| {
                m["role"] == "user"
                    && m["content"]
                        .as_str()
                        .is_some_and(|c| c.starts_with("question "))
            })
            .map_or(messages.len(), |j| start + 1 + j);
        let turn = &messages[start + 1..end];
        let made: Vec<(String, Value)> = turn
            .iter()
            .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
            .map(|c| {
                let f = &c["function"];
                (
                    f["name"].as_str().unwrap().to_owned(),
                    serde_json::from_str(f["arguments"].as_str().unwrap()).unwrap(),
                )
            })
            .collect();
        let told = turn.iter().any(|m| {
            m["role"] == "user"
                && m["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("Your last reply tried to call a tool"))
        });
        match means {
            Calls(expected) => {
                let expected: Vec<(String, Value)> = expected
                    .iter()
                    .map(|(n, a)| (n.to_string(), a.clone()))
                    .collect();
                assert_eq!(made, expected, "reply {i}: {reply}");
                // The real servers answered.
                let results: Vec<&str> = turn
                    .iter()
                    .filter(|m| m["role"] == "tool")
                    .map(|m| m["content"].as_str().unwrap())
                    .collect();
                assert_eq!(results.len(), expected.len(), "reply {i}");
                for ((name, arguments), result) in expected.iter().zip(&results) {
                    if name == "weather__get_weather" {
                        assert!(
                            result.contains(arguments["city"].as_str().unwrap()),
                            "reply {i}: {result}"
                        );
                        assert!(result.contains("\"condition\""), "reply {i}: {result}");
                    } else {
                        assert!(result.contains("datetime"), "reply {i}: {result}");
                    }
                }
                assert!(!told, "reply {i}");
            }
            Failed => {
                assert!(made.is_empty(), "reply {i}: {made:?}");
                assert!(told, "reply {i}: the model was not told how to call");
            }
            Answer => {
                assert!(made.is_empty() && !told, "reply {i}");
            }
        }
    }
    assert!(
        stderr
            .contains("(the model's tool call could not be read: it wrote a tool's result itself"),
        "{stderr}"
    );
}

/// A model that keeps failing is told twice, then the run fails with what helps.
#[tokio::test]
async fn a_model_that_keeps_failing_ends_the_run_with_what_helps() {
    let broken = "{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": ";
    let model = ScriptedModel::start(vec![
        Scripted::answer(broken),
        Scripted::answer(broken),
        Scripted::answer(broken),
        Scripted::answer("never asked"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    weather_and_time(home.path(), json!({}));
    let mut run = vec!["run".to_owned()];
    run.extend(args(&model, &["-p", "weather in beijing?"]));
    let out = prise(home.path(), run, "").await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "error: openai-compatible:fake kept writing tool calls that could not be read (its call of \
             weather__get_weather is not valid JSON; 3 replies in a row). What helps: native tool calling"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("--tool-choice required"), "{stderr}");
    assert_eq!(model.requests().len(), 3, "two retries, then it stops");
    // With "toolCallRetries": 0 it is not asked again.
    let model = ScriptedModel::start(vec![Scripted::answer(broken)]).await;
    weather_and_time(home.path(), json!({"toolCallRetries": 0}));
    let mut run = vec!["run".to_owned()];
    run.extend(args(&model, &["-p", "weather?"]));
    let out = prise(home.path(), run, "").await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(model.requests().len(), 1);
}

/// Arguments that do not fit the schema are not sent; the model hears why.
#[tokio::test]
async fn recovered_arguments_are_checked_against_the_schema() {
    let model = ScriptedModel::start(vec![
        Scripted::answer("<tool_call>{\"name\": \"weather__get_weather\", \"arguments\": {\"town\": \"beijing\"}}</tool_call>"),
        Scripted::answer("<tool_call>{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"beijing\"}}</tool_call>"),
        Scripted::answer("Rainy."),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    weather_and_time(home.path(), json!({}));
    let mut run = vec!["run".to_owned()];
    run.extend(args(
        &model,
        &["-p", "weather in beijing?", "--output", "stream-json"],
    ));
    let out = prise(home.path(), run, "").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = model.requests()[2].tool_results();
    assert!(
        results[0].starts_with("error: the call was not made: its arguments do not fit weather__get_weather: `city` is required"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("rainy"), "{}", results[1]);
    // The events say which calls were read from text, with their arguments as JSON,
    // and the turn that made them stopped for tool calls.
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let start = lines.iter().find(|l| l["type"] == "tool-start").unwrap();
    assert_eq!(start["recovered"], true);
    assert_eq!(start["arguments"], json!({"town": "beijing"}));
    let first_turn = lines.iter().find(|l| l["type"] == "turn-end").unwrap();
    assert_eq!(first_turn["stop"], "tool-calls");
}

/// Sampling settings reach the request: local defaults, the config, then flags.
#[tokio::test]
async fn sampling_settings_reach_the_request() {
    let home = tempfile::tempdir().unwrap();
    weather_and_time(home.path(), json!({}));
    let model = ScriptedModel::start(vec![
        Scripted::answer("a"),
        Scripted::answer("b"),
        Scripted::answer("c"),
    ])
    .await;
    let run = |extra: &[&str]| {
        let mut run = vec!["run".to_owned()];
        run.extend(args(&model, extra));
        run
    };
    prise(home.path(), run(&["-p", "q"]), "").await;
    weather_and_time(
        home.path(),
        json!({"temperature": 0.5, "topP": 0.9, "seed": 42, "toolChoice": "required", "maxOutputTokens": 100}),
    );
    prise(home.path(), run(&["-p", "q"]), "").await;
    prise(
        home.path(),
        run(&[
            "-p",
            "q",
            "--temperature",
            "1.1",
            "--top-p",
            "0.5",
            "--seed",
            "7",
            "--tool-choice",
            "none",
        ]),
        "",
    )
    .await;
    let requests = model.requests();
    let pick = |i: usize| {
        let body = &requests[i].body;
        (
            body["temperature"].clone(),
            body["top_p"].clone(),
            body["seed"].clone(),
            body["tool_choice"].clone(),
            body["max_tokens"].clone(),
        )
    };
    // A local provider: a low temperature and a reply cap, the rest the server's.
    assert_eq!(
        pick(0),
        (
            json!(0.2),
            Value::Null,
            Value::Null,
            Value::Null,
            json!(2048)
        )
    );
    assert_eq!(
        pick(1),
        (
            json!(0.5),
            json!(0.9),
            json!(42),
            json!("required"),
            json!(100)
        )
    );
    assert_eq!(
        pick(2),
        (json!(1.1), json!(0.5), json!(7), json!("none"), json!(100))
    );
}

/// A stream that loops is cut and said to be, not read until the context is full.
#[tokio::test]
async fn a_degenerate_stream_is_cut() {
    let mut chunks: Vec<Value> =
        vec![json!({"choices": [{"index": 0, "delta": {"content": "The weather is "}}]})];
    chunks.extend(
        (0..5000).map(|_| json!({"choices": [{"index": 0, "delta": {"content": "very "}}]})),
    );
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    let model = ScriptedModel::start(vec![Scripted::Stream(chunks)]).await;
    let home = tempfile::tempdir().unwrap();
    weather_and_time(home.path(), json!({}));
    let mut run = vec!["run".to_owned()];
    run.extend(args(&model, &["-p", "q", "--output", "stream-json"]));
    let out = prise(home.path(), run, "").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end = lines.iter().find(|l| l["type"] == "turn-end").unwrap();
    assert_eq!(end["stop"], "degenerate");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "(the model's output degenerated, \"very \" repeated over 400 times; it was cut there)"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer = lines.last().unwrap()["text"].as_str().unwrap().to_owned();
    assert!(answer.starts_with("The weather is very very"), "{answer}");
    assert!(answer.len() < 5000, "cut after {} characters", answer.len());
    // Blank lines by the thousand: cut too.
    let blank = ScriptedModel::start(vec![Scripted::Stream(vec![
        json!({"choices": [{"index": 0, "delta": {"content": "Answer:"}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "\n".repeat(3000)}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "never read"}}]}),
    ])])
    .await;
    let mut run = vec!["run".to_owned()];
    run.extend(args(&blank, &["-p", "q", "--output", "stream-json"]));
    let out = prise(home.path(), run, "").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(r#""stop":"degenerate""#), "{stdout}");
    assert!(!stdout.contains("never read"), "{stdout}");
}

/// The first run with a local server: `prise models` says what it serves, and a model
/// it lacks is named with how to get it, not a bare 404.
#[tokio::test]
async fn models_are_listed_and_a_missing_one_is_explained() {
    let home = tempfile::tempdir().unwrap();
    let served = || {
        Scripted::Json(
            json!({"object": "list", "data": [{"id": "qwen2.5:1.5b"}, {"id": "llama3.2"}]}),
        )
    };
    let model = ScriptedModel::start(vec![served(), served()]).await;
    let models = |extra: &[&str]| {
        let mut args = vec![
            "models".to_owned(),
            "-m".to_owned(),
            "ollama:llama3.2".to_owned(),
            "--base-url".to_owned(),
            model.url.clone(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let out = prise(home.path(), models(&[]), "").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "llama3.2  (the model in use)\nqwen2.5:1.5b\n"
    );
    let out = prise(home.path(), models(&["--json"]), "").await;
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap(),
        json!(["llama3.2", "qwen2.5:1.5b"])
    );
    assert!(model.requests().iter().all(|r| r.path == "/v1/models"));

    let model = ScriptedModel::start(vec![
        Scripted::Status(404, vec![("content-type", "application/json")], r#"{"error": {"message": "model \"qwen9\" not found, try pulling it first", "type": "api_error"}}"#),
        served(),
    ])
    .await;
    let out = prise(
        home.path(),
        [
            "run",
            "-m",
            "ollama:qwen9",
            "--base-url",
            &model.url,
            "-p",
            "hi",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        "",
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: model qwen9 not found on {}: it serves llama3.2, qwen2.5:1.5b; `ollama pull qwen9` fetches it\nhint: `prise models` lists them\n",
            model.url
        )
    );
}
