//! Tool search (`prise tools --search`) evaluated: the tools of the reference servers
//! the tests install (mounted for real) and definitions written for common services
//! (`fixtures/service_tools.json`: code hosting, chat, calendar, tickets, a database,
//! a cluster, storage, payments, mail), against tasks written as people say them,
//! each with the tool that serves it, in five sets written one after another, each
//! before a change of the ranking: `tool_search_tasks.json` (the first, tuned on),
//! `tool_search_held_out.json` (then tuned on in its turn), `tool_search_fresh.json`
//! and `tool_search_unseen.json` (measured, then their misses looked at), and
//! `tool_search_blind.json`, whose misses are never printed, so that it stays a
//! measure. The targets are recall@5 ≥ 95 % and recall@1 ≥ 80 %; they are not met on
//! the blind set (docs/agent.md has the figures), so the test holds the ranking to
//! what it measured, to catch a change that makes it worse.

mod common;
#[path = "../../prise-llm/tests/scripted_model/mod.rs"]
mod scripted_model;

use std::path::Path;

use common::{prise, prise_async, reference_servers};
use prise_mcp::ExposedTool;
use prise_search::ToolIndex;
use scripted_model::{Recorded, Scripted, ScriptedModel};
use serde_json::{Value, json};

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `home/.mcp.json` with the reference servers.
fn reference_servers_at(home: &Path) {
    std::fs::write(home.join(".mcp.json"), reference_servers(home).to_string()).unwrap();
}

/// The tools `prise tools --json` lists, as the index takes them.
fn mounted_tools(home: &Path) -> Vec<ExposedTool> {
    let out = prise(home).args(["tools", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    rows.into_iter()
        .map(|row| ExposedTool {
            name: row["name"].as_str().unwrap().to_owned(),
            server: row["server"].as_str().unwrap().to_owned(),
            tool: serde_json::from_value(row["tool"].clone()).unwrap(),
        })
        .collect()
}

fn written_tools() -> Vec<ExposedTool> {
    let Value::Array(tools) = fixture("service_tools.json") else {
        panic!("an array")
    };
    tools
        .into_iter()
        .map(|mut tool| {
            let server = tool.as_object_mut().unwrap().remove("server").unwrap();
            let server = server.as_str().unwrap().to_owned();
            ExposedTool {
                name: format!("{server}__{}", tool["name"].as_str().unwrap()),
                server,
                tool: serde_json::from_value(tool).unwrap(),
            }
        })
        .collect()
}

#[test]
fn tasks_find_their_tools_among_a_hundred() {
    let home = tempfile::tempdir().unwrap();
    reference_servers_at(home.path());
    let mut tools = mounted_tools(home.path());
    let real = tools.len();
    assert_eq!(real, 56, "the reference servers' tools");
    tools.extend(written_tools());
    assert!(tools.len() >= 100, "{} tools", tools.len());
    let index = ToolIndex::new(
        tools
            .iter()
            .map(|t| (t.name.as_str(), t.server.as_str(), &t.tool)),
    );

    let tuned = recall(&index, &tools, "tool_search_tasks.json");
    let held_out = recall(&index, &tools, "tool_search_held_out.json");
    let fresh = recall(&index, &tools, "tool_search_fresh.json");
    let unseen = recall(&index, &tools, "tool_search_unseen.json");
    // Its misses are not printed: this set is for measuring, not for tuning.
    let blind = recall(&index, &tools, "tool_search_blind.json");
    eprintln!(
        "tool search over {} tools ({real} real):\n{tuned}\n{held_out}\n{fresh}\n{unseen}\n{}",
        tools.len(),
        blind.figures()
    );
    assert!(tuned.tasks >= 40);
    // Each set is held to what it measured with the lexicon of software words and the
    // reading of values, servers named and questions (the sets' files say how they were
    // written; only the last was never looked at).
    // Tuned on: 89.4 % and 100 % (42 and 47 of 47).
    assert!(tuned.at1 >= 0.89 && tuned.at5 >= 1.0, "{tuned}");
    // Tuned on: 83.3 % and 100 % (20 and 24 of 24).
    assert!(held_out.at1 >= 0.83 && held_out.at5 >= 1.0, "{held_out}");
    // Its misses were read: 72.3 % and 97.9 % (34 and 46 of 47).
    assert!(fresh.at1 >= 0.72 && fresh.at5 >= 0.97, "{fresh}");
    // Its misses were read: 81.8 % and 94.5 % (45 and 52 of 55).
    assert!(unseen.at1 >= 0.81 && unseen.at5 >= 0.94, "{unseen}");
    // Written before the lexicon and measured after each change, never looking at
    // what it missed: 54.2 % and 87.5 % at the last (26 and 42 of 48), as before the
    // reading of values, servers named and questions, which moved only the sets it was
    // made from. The figures to believe.
    assert!(
        blind.at1 >= 0.54 && blind.at5 >= 0.87,
        "{}",
        blind.figures()
    );
}

/// Recall of the tasks of one fixture file.
struct Recall {
    file: &'static str,
    tasks: usize,
    at1: f64,
    at5: f64,
    missed: Vec<String>,
}

impl Recall {
    /// The file and its two figures, without the tasks missed.
    fn figures(&self) -> String {
        format!(
            "{}: {} tasks, recall@1 {:.1} %, recall@5 {:.1} %",
            self.file,
            self.tasks,
            self.at1 * 100.0,
            self.at5 * 100.0,
        )
    }
}

impl std::fmt::Display for Recall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}; not first:\n  {}",
            self.figures(),
            self.missed.join("\n  ")
        )
    }
}

fn recall(index: &ToolIndex, tools: &[ExposedTool], file: &'static str) -> Recall {
    let Value::Array(tasks) = fixture(file) else {
        panic!("an array")
    };
    let (mut first, mut top5, mut missed) = (0, 0, Vec::new());
    for task in &tasks {
        let (query, expected) = (
            task["task"].as_str().unwrap(),
            task["tool"].as_str().unwrap(),
        );
        assert!(
            tools.iter().any(|t| t.name == expected),
            "{expected} is not a tool"
        );
        let found: Vec<String> = index.search(query, 5).into_iter().map(|f| f.name).collect();
        match found.iter().position(|name| name == expected) {
            Some(0) => {
                first += 1;
                top5 += 1;
            }
            Some(_) => top5 += 1,
            None => {}
        }
        if found.first().map(String::as_str) != Some(expected) {
            missed.push(format!("{query:?}: wanted {expected}, got {found:?}"));
        }
    }
    Recall {
        file,
        tasks: tasks.len(),
        at1: first as f64 / tasks.len() as f64,
        at5: top5 as f64 / tasks.len() as f64,
        missed,
    }
}

#[test]
fn prise_tools_search_ranks_with_scores() {
    let home = tempfile::tempdir().unwrap();
    reference_servers_at(home.path());
    let out = prise(home.path())
        .args([
            "tools",
            "--search",
            "what did I change but not stage yet",
            "--limit",
            "3",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["name"], "git__git_diff_unstaged");
    let scores: Vec<f64> = rows.iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    // A query nothing matches: an empty list, and a word on stderr in a table.
    let out = prise(home.path())
        .args(["tools", "--search", "zebra", "--json"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    let out = prise(home.path())
        .args(["tools", "fs", "--search", "zebra"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tool matches \"zebra\""));
    // --limit without --search is a usage error.
    let out = prise(home.path())
        .args(["tools", "--limit", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The names of the tools a request to the model double sent.
fn sent(request: &Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// `prise run` against `model` with `--tool-search WHEN`, its stream-json events.
async fn run(home: &Path, model: &ScriptedModel, when: &str) -> Vec<Value> {
    let more = [
        "--tool-search",
        when,
        "--output",
        "stream-json",
        "-p",
        "What time is it in UTC?",
    ];
    let out = prise_async(home, common::run_args(&model.url, &more)).await;
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn the_model_searches_then_calls_what_it_found() {
    let home = tempfile::tempdir().unwrap();
    reference_servers_at(home.path());
    let model = ScriptedModel::start(vec![
        Scripted::tool_call(
            "c1",
            "search_tools",
            json!({"query": "current time in a timezone"}),
        ),
        Scripted::tool_call("c2", "time__get_current_time", json!({"timezone": "UTC"})),
        Scripted::answer("It is noon in UTC."),
    ])
    .await;
    let events = run(home.path(), &model, "always").await;
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    // First: the search tool (and the resource reader), none of the 56.
    let first = sent(&requests[0]);
    assert!(first.contains(&"search_tools".to_owned()), "{first:?}");
    assert!(first.len() <= 2, "{first:?}");
    // The search's answer names the tool, which is sent in full from the next turn.
    let found = &requests[1].tool_results()[0];
    assert!(found.contains("time__get_current_time"), "{found}");
    assert!(sent(&requests[1]).contains(&"time__get_current_time".to_owned()));
    // Its result reaches the model.
    let result = &requests[2].tool_results()[1];
    assert!(result.contains("\"timezone\": \"UTC\""), "{result}");
    // stream-json says how much the tools took each turn.
    let starts: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "turn-start")
        .collect();
    assert_eq!(starts.len(), 3);
    let tokens = |i: usize| starts[i]["toolTokens"].as_u64().unwrap();
    assert!(tokens(0) > 0 && tokens(0) < tokens(1), "{starts:?}");
}

#[tokio::test]
async fn a_tool_never_found_is_still_called_and_never_means_every_tool() {
    let home = tempfile::tempdir().unwrap();
    reference_servers_at(home.path());
    // The model calls a tool it was not sent: routed all the same.
    let model = ScriptedModel::start(vec![
        Scripted::tool_call("c1", "time__get_current_time", json!({"timezone": "UTC"})),
        Scripted::answer("noon"),
    ])
    .await;
    run(home.path(), &model, "always").await;
    let requests = model.requests();
    assert!(requests[1].tool_results()[0].contains("\"timezone\": \"UTC\""));
    assert!(sent(&requests[1]).contains(&"time__get_current_time".to_owned()));

    let model = ScriptedModel::start(vec![Scripted::answer("noon")]).await;
    let events = run(home.path(), &model, "never").await;
    let sent = sent(&model.requests()[0]);
    assert!(!sent.contains(&"search_tools".to_owned()));
    assert!(sent.len() >= 56, "{}", sent.len());
    let start = events.iter().find(|e| e["type"] == "turn-start").unwrap();
    assert_eq!(start["tools"].as_u64().unwrap() as usize, sent.len());
}

#[test]
fn token_estimates_agree_with_o200k() {
    let home = tempfile::tempdir().unwrap();
    reference_servers_at(home.path());
    let mut tools = mounted_tools(home.path());
    tools.extend(written_tools());
    let estimated = prise_agent::offer::tool_tokens(&tools);
    let o200k = tiktoken_rs::o200k_base().unwrap();
    // Each definition as an OpenAI-compatible request carries it.
    let counted: Vec<usize> = tools
        .iter()
        .map(|t| {
            let definition = json!({"type": "function", "function": {
                "name": t.name, "description": t.tool.description, "parameters": t.tool.input_schema}});
            o200k.encode_ordinary(&definition.to_string()).len()
        })
        .collect();
    let (ours, theirs): (usize, usize) = (estimated.iter().sum(), counted.iter().sum());
    let off = |a: usize, b: usize| (a as f64 - b as f64).abs() / b as f64;
    let worst = estimated
        .iter()
        .zip(&counted)
        .map(|(a, b)| off(*a, *b))
        .fold(0.0, f64::max);
    eprintln!(
        "{} tools: estimated {ours} tokens, o200k {theirs} ({:+.1} %); worst single tool {:.0} % off",
        tools.len(),
        (ours as f64 - theirs as f64) / theirs as f64 * 100.0,
        worst * 100.0
    );
    assert!(
        off(ours, theirs) <= 0.15,
        "estimated {ours}, o200k {theirs}"
    );
    assert!(worst <= 0.5, "a tool {:.0} % off", worst * 100.0);
    // `prise tools --tokens --json` gives the same estimates.
    let out = prise(home.path())
        .args(["tools", "--tokens", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let listed: u64 = rows.iter().map(|r| r["tokens"].as_u64().unwrap()).sum();
    assert_eq!(
        listed as usize,
        estimated[..rows.len()].iter().sum::<usize>()
    );
}

#[tokio::test]
async fn the_first_request_is_a_small_share_with_search() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/many_tools_server.py");
    let mut lines = Vec::new();
    for count in [50, 150, 500] {
        let home = tempfile::tempdir().unwrap();
        let config = json!({"mcpServers": {"many": {"command": common::peers().join("venv/bin/python"),
            "args": [&script], "env": {"TOOLS": count.to_string()}}}});
        std::fs::write(home.path().join(".mcp.json"), config.to_string()).unwrap();
        let mut sizes = Vec::new();
        for when in ["never", "always"] {
            let model = ScriptedModel::start(vec![Scripted::answer("ok")]).await;
            let events = run(home.path(), &model, when).await;
            let request = &model.requests()[0];
            assert_eq!(sent(request).len(), if when == "never" { count } else { 1 });
            let bytes = request.body["tools"].to_string().len();
            let start = events.iter().find(|e| e["type"] == "turn-start").unwrap();
            sizes.push((bytes, start["toolTokens"].as_u64().unwrap()));
        }
        let share = sizes[1].0 as f64 / sizes[0].0 as f64;
        lines.push(format!(
            "{count} tools: {} bytes (~{} tokens) without search, {} bytes (~{} tokens) with it: {:.1} %",
            sizes[0].0, sizes[0].1, sizes[1].0, sizes[1].1, share * 100.0
        ));
        if count == 150 {
            assert!(share <= 0.10, "{share}");
        }
    }
    eprintln!("{}", lines.join("\n"));
}
