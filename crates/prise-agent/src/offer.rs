//! Which tools a model is sent each turn: all of them, or, with tool search, a
//! `search_tools(query)` tool, the tools of servers with `"alwaysLoad"`, and the
//! tools it found or called so far, each sent in full from the turn after. This is
//! the portable path: it works with any provider, since it is only tools and text.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Mutex;

use prise_config::ToolSearch;
use prise_llm::ToolDefinition;
use prise_mcp::ExposedTool;
use serde_json::json;

use crate::present::{READ_RESOURCE, ToolTable};
use prise_search::ToolIndex;

/// The built-in tool that searches the mounted tools. Exposed names always contain
/// `__`, so no server's tool can take this name.
pub const SEARCH_TOOLS: &str = "search_tools";

/// In `auto`, search switches on when every tool's definition together would take
/// more than this many tokens of each request: about 40 KB of JSON, 5 % of a 200k
/// window, and too much for the 8k–32k windows of small local models.
pub const AUTO_THRESHOLD_TOKENS: usize = 10_000;

/// How many tools one search returns.
const FOUND_PER_SEARCH: usize = 5;

/// What is sent, turn after turn.
#[derive(Debug)]
pub(crate) struct Offer {
    searching: Option<Searching>,
}

#[derive(Debug)]
struct Searching {
    index: ToolIndex,
    /// Exposed names sent in full: always loaded, found or used.
    loaded: Mutex<HashSet<String>>,
}

impl Offer {
    /// Every tool of `tools` (as `table` presents them), or search in their place as
    /// `mode` says; `always` names the servers whose tools are always sent.
    pub fn new(
        tools: &[ExposedTool],
        table: &ToolTable,
        mode: ToolSearch,
        always: &[String],
    ) -> Offer {
        let search = match mode {
            ToolSearch::Never => false,
            ToolSearch::Always => true,
            ToolSearch::Auto => estimated_tokens(table.definitions()) > AUTO_THRESHOLD_TOKENS,
        };
        let searching = search.then(|| Searching {
            index: ToolIndex::new(
                tools
                    .iter()
                    .map(|t| (t.name.as_str(), t.server.as_str(), &t.tool)),
            ),
            loaded: Mutex::new(
                tools
                    .iter()
                    .filter(|t| always.contains(&t.server))
                    .map(|t| t.name.clone())
                    .collect(),
            ),
        });
        Offer { searching }
    }

    /// Whether the model searches for its tools.
    pub fn searching(&self) -> bool {
        self.searching.is_some()
    }

    /// The definitions to send this turn: the table's own when not searching, so that
    /// a turn copies nothing.
    pub fn definitions<'t>(&self, table: &'t ToolTable) -> Cow<'t, [ToolDefinition]> {
        let Some(searching) = &self.searching else {
            return Cow::Borrowed(table.definitions());
        };
        let loaded = searching.loaded.lock().unwrap_or_else(|e| e.into_inner());
        let mut sent = vec![search_definition(searching.index.len())];
        sent.extend(
            table
                .definitions()
                .iter()
                .filter(|d| {
                    d.name == READ_RESOURCE
                        || table.exposed(&d.name).is_some_and(|e| loaded.contains(e))
                })
                .cloned(),
        );
        Cow::Owned(sent)
    }

    /// Runs a search: the text the model reads, the tools found being sent in full
    /// from the next turn on.
    pub fn search(&self, query: &str, table: &ToolTable) -> String {
        let Some(searching) = &self.searching else {
            return format!("error: there is no tool named {SEARCH_TOOLS}");
        };
        let found = searching.index.search(query, FOUND_PER_SEARCH);
        if found.is_empty() {
            return format!(
                "No tool matches \"{query}\". Search again with other words: what the tool acts on, and what it does to it."
            );
        }
        let mut loaded = searching.loaded.lock().unwrap_or_else(|e| e.into_inner());
        let mut text = String::from("These tools can be called from your next step on:");
        for hit in &found {
            loaded.insert(hit.name.clone());
            let description = table
                .definitions()
                .iter()
                .find(|d| table.exposed(&d.name) == Some(hit.name.as_str()))
                .map(|d| {
                    (
                        d.name.as_str(),
                        d.description.lines().next().unwrap_or_default(),
                    )
                });
            if let Some((name, description)) = description {
                text.push_str(&format!("\n- {name}: {description}"));
            }
        }
        text
    }

    /// Remembers that the model called `exposed`, so that it stays sent.
    pub fn used(&self, exposed: &str) {
        if let Some(searching) = &self.searching {
            let mut loaded = searching.loaded.lock().unwrap_or_else(|e| e.into_inner());
            loaded.insert(exposed.to_owned());
        }
    }
}

/// The search tool, saying how many tools there are to find.
fn search_definition(tools: usize) -> ToolDefinition {
    ToolDefinition {
        name: SEARCH_TOOLS.to_owned(),
        description: format!(
            "Search the {tools} tools available to you and load the ones that fit: describe what you need done \
             in a few words (\"create a calendar event\", \"read a file\"). The tools found can be called from \
             your next step on. Search before saying that you cannot do something."
        ),
        parameters: json!({"type": "object", "properties": {"query": {"type": "string",
            "description": "What the tool should do, in a few words"}}, "required": ["query"]}),
    }
}

/// About how many tokens each of `tools` takes in a request (its definition as an
/// OpenAI-compatible provider is sent it), in order.
pub fn tool_tokens(tools: &[ExposedTool]) -> Vec<usize> {
    let table = ToolTable::new(tools, prise_llm::SchemaDialect::OpenAi);
    table
        .definitions()
        .iter()
        .map(|d| estimated_tokens(std::slice::from_ref(d)))
        .collect()
}

/// About how many tokens `definitions` take in a request: their JSON's length in
/// bytes over four, the usual figure for English and JSON with common tokenizers
/// (checked against o200k in the tests).
pub fn estimated_tokens(definitions: &[ToolDefinition]) -> usize {
    let bytes: usize = definitions
        .iter()
        .map(|d| d.name.len() + d.description.len() + d.parameters.to_string().len() + 40)
        .sum();
    bytes.div_ceil(4)
}
