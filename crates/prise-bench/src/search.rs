//! Tool search's speed: the tasks of the tool-search evaluation
//! (`crates/prise/tests/fixtures/tool_search_tasks.json`) asked of 1,000 tools made
//! from the written service definitions (`service_tools.json`, taken in turn under
//! numbered servers), in this process: building the index, and each query.

use std::path::Path;
use std::time::{Duration, Instant};

use prise_bench::summarize;
use prise_mcp::ExposedTool;
use prise_search::ToolIndex;
use serde_json::Value;

use crate::plan::Plan;

/// The index's size, how long it took to build, and the median and p99 query.
pub struct SearchResults {
    pub tools: usize,
    pub build: Duration,
    pub median: Duration,
    pub p99: Duration,
}

const TOOLS: usize = 1_000;

pub fn measure(plan: &Plan) -> Result<SearchResults, String> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../prise/tests/fixtures");
    let read = |name: &str| -> Result<Vec<Value>, String> {
        let text =
            std::fs::read_to_string(fixtures.join(name)).map_err(|e| format!("{name}: {e}"))?;
        serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))
    };
    let written = read("service_tools.json")?;
    let tasks: Vec<String> = read("tool_search_tasks.json")?
        .iter()
        .filter_map(|t| t["task"].as_str().map(str::to_owned))
        .collect();
    let mut tools = Vec::with_capacity(TOOLS);
    for i in 0..TOOLS {
        let mut tool = written[i % written.len()].clone();
        let server = format!(
            "{}{}",
            tool["server"].as_str().unwrap_or("s"),
            i / written.len()
        );
        tool.as_object_mut().map(|t| t.remove("server"));
        let tool: prise_mcp::model::Tool =
            serde_json::from_value(tool).map_err(|e| e.to_string())?;
        tools.push(ExposedTool {
            name: format!("{server}__{}", tool.name),
            server,
            tool,
        });
    }
    let started = Instant::now();
    let index = ToolIndex::new(
        tools
            .iter()
            .map(|t| (t.name.as_str(), t.server.as_str(), &t.tool)),
    );
    let build = started.elapsed();
    let mut samples = Vec::new();
    let rounds = (plan.startup_runs * 10).max(1);
    for _ in 0..rounds {
        for task in &tasks {
            let started = Instant::now();
            let found = index.search(task, 5);
            samples.push(started.elapsed().as_nanos() as u64);
            std::hint::black_box(found);
        }
    }
    let summary = summarize(&samples).ok_or("no query measured")?;
    Ok(SearchResults {
        tools: index.len(),
        build,
        median: summary.median,
        p99: summary.p99,
    })
}
