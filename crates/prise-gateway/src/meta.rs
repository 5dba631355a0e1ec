//! Meta-tools, for clients that choke on many tools (VS Code caps a request at 128):
//! in place of every tool, the gateway lists `search_tools(query)`, which ranks the
//! tools it serves for a task (`prise_search`) and gives their definitions, and
//! `call_tool(name, arguments)`, which calls one of them as if it had been listed;
//! plus the tools of servers configured with `"alwaysLoad"`.

use rmcp::model::{CallToolResult, ErrorData, JsonObject, Tool};
use serde_json::{Value, json};

/// The meta-tool that searches.
pub const SEARCH_TOOLS: &str = "search_tools";
/// The meta-tool that calls.
pub const CALL_TOOL: &str = "call_tool";
/// How many tools one search gives.
const FOUND: usize = 8;

/// The two meta-tools.
pub(crate) fn definitions(tools: usize) -> Vec<Tool> {
    let schema = |value: Value| match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    vec![
        Tool::new(
            SEARCH_TOOLS,
            format!(
                "Search the {tools} tools this server offers for the ones that fit a task, described in a few \
                 words (\"create a calendar event\", \"read a file\"). Returns their names, descriptions and \
                 input schemas; call one with {CALL_TOOL}."
            ),
            schema(
                json!({"type": "object", "properties": {"query": {"type": "string",
                "description": "What the tool should do, in a few words"}}, "required": ["query"]}),
            ),
        ),
        Tool::new(
            CALL_TOOL,
            format!(
                "Call a tool that {SEARCH_TOOLS} found, by its name, with arguments that fit its input schema."
            ),
            schema(json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "The tool's name, as search_tools gave it"},
                "arguments": {"type": "object", "description": "Its arguments"}}, "required": ["name"]})),
        ),
    ]
}

/// `search_tools`: the tools of `listed` (each with its server) that fit `arguments`'
/// query, best first, as text and as structured content.
pub(crate) fn search(
    listed: &[(String, Tool)],
    arguments: Option<&JsonObject>,
) -> Result<CallToolResult, ErrorData> {
    let query = arguments
        .and_then(|a| a.get("query"))
        .and_then(Value::as_str)
        .filter(|q| !q.trim().is_empty())
        .ok_or_else(|| {
            ErrorData::invalid_params(format!("{SEARCH_TOOLS} needs a \"query\""), None)
        })?;
    let index = prise_search::ToolIndex::new(
        listed
            .iter()
            .map(|(server, tool)| (tool.name.as_ref(), server.as_str(), tool)),
    );
    let found: Vec<Value> = index
        .search(query, FOUND)
        .into_iter()
        .filter_map(|hit| listed.iter().find(|(_, t)| t.name == hit.name.as_str()))
        .map(|(_, tool)| {
            json!({"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema})
        })
        .collect();
    Ok(CallToolResult::structured(json!({"tools": found})))
}

/// `call_tool`'s arguments: the tool to call, and its own arguments.
pub(crate) fn unwrap_call(
    arguments: Option<JsonObject>,
) -> Result<(String, Option<JsonObject>), ErrorData> {
    let mut arguments = arguments.unwrap_or_default();
    let Some(Value::String(name)) = arguments.remove("name") else {
        return Err(ErrorData::invalid_params(
            format!("{CALL_TOOL} needs the \"name\" of a tool {SEARCH_TOOLS} found"),
            None,
        ));
    };
    let inner = match arguments.remove("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::Object(inner)) => Some(inner),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                format!("{CALL_TOOL}: \"arguments\" must be an object"),
                None,
            ));
        }
    };
    Ok((name, inner))
}
