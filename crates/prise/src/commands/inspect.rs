//! The inspector: `servers`, `tools`, `call`, `resources`, `read`, `prompts`, `prompt`.
//! No model is involved; each command mounts, asks, prints, and closes.

use std::io::{IsTerminal, Read, Write};

use prise_mcp::model::{CallToolResult, ContentBlock, JsonObject, ResourceContents};
use prise_mcp::{CallError, Mounts};
use prise_trust::pins::Declaration;
use serde_json::{Value, json};

use crate::cli::{CallArgs, PromptArgs, PromptsArgs, ReadArgs, ResourcesArgs, ToolsArgs};
use crate::commands::mounted::{Servers, Wanted};
use crate::commands::prompt_arguments;
use crate::failure::Failure;
use crate::output;

/// `prise servers`: each configured server's state, protocol, and what it offers.
pub async fn servers(servers: Servers, json: bool) -> Result<(), Failure> {
    let mounts = servers.mount(Wanted::All).await?;
    let failed: Vec<String> = mounts.failures().iter().map(|f| f.server.clone()).collect();
    let exposed = mounts.tools();
    let counts = prise_agent::offer::tool_tokens(&exposed);
    let tokens_of = |server: &str| -> usize {
        exposed
            .iter()
            .zip(&counts)
            .filter(|(t, _)| t.server == server)
            .map(|(_, n)| n)
            .sum()
    };
    // The page's vocabulary, and what each server's tools cost a model.
    let rows: Vec<(prise_mcp::ServerStatus, Option<usize>)> = mounts
        .statuses()
        .into_iter()
        .map(|status| {
            let tokens = status.tools.map(|_| tokens_of(&status.name));
            (status, tokens)
        })
        .collect();
    mounts.close().await;
    let mut out = output::stdout();
    if json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|(status, tokens)| {
                let mut row = serde_json::to_value(status).unwrap_or_default();
                row["toolTokens"] = json!(tokens);
                row
            })
            .collect();
        output::json(&mut out, &rows)?;
    } else {
        let or_dash = |n: Option<usize>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|(status, tokens)| {
                let state = serde_json::to_value(status.state).unwrap_or_default();
                vec![
                    status.name.clone(),
                    state.as_str().unwrap_or_default().to_owned(),
                    status.transport.unwrap_or("-").to_owned(),
                    status
                        .protocol_version
                        .clone()
                        .unwrap_or_else(|| "-".to_owned()),
                    status
                        .server_info
                        .as_ref()
                        .map_or_else(|| "-".to_owned(), |s| format!("{} {}", s.name, s.version)),
                    or_dash(status.tools),
                    or_dash(*tokens),
                    or_dash(status.resources),
                    or_dash(status.prompts),
                    status
                        .startup_ms
                        .map_or_else(|| "-".to_owned(), |ms| format!("{} ms", ms.round())),
                ]
            })
            .collect();
        output::table(
            &mut out,
            &[
                "NAME",
                "STATE",
                "TRANSPORT",
                "PROTOCOL",
                "SERVER",
                "TOOLS",
                "TOKENS",
                "RESOURCES",
                "PROMPTS",
                "STARTUP",
            ],
            &table,
        )?;
        for (status, _) in &rows {
            if let Some(error) = &status.error {
                writeln!(out, "\nserver {}: {error}", status.name)?;
                for line in &status.stderr_tail {
                    writeln!(out, "  | {line}")?;
                }
            }
        }
    }
    if !json && !exposed.is_empty() {
        writeln!(out, "\n{}", tokens_line(exposed.len(), counts.iter().sum()))?;
    }
    out.flush()?;
    // Scripts check health by the exit code.
    if !failed.is_empty() {
        return Err(Failure::Job(anyhow::anyhow!(
            "{} of {} enabled servers could not be mounted: {}",
            failed.len(),
            rows.iter()
                .filter(|(status, _)| status.state != prise_mcp::State::Disabled)
                .count(),
            failed.join(", ")
        )));
    }
    Ok(())
}

/// `prise tools`: the tools as a model would see them.
pub async fn tools(servers: Servers, args: ToolsArgs) -> Result<(), Failure> {
    let only = args.target.as_deref();
    if let Some(name) = only
        && !servers.has_server(name)
        && name.contains(prise_mcp::registry::SEPARATOR)
    {
        return tool(servers, name, args.json).await;
    }
    let mounts = servers.mount_for(wanted(only)).await?;
    let tools: Vec<_> = mounts
        .tools()
        .into_iter()
        .filter(|t| keeps(only, &t.server))
        .collect();
    if let Some(query) = &args.search {
        mounts.close().await;
        return search(&tools, query, args.limit, args.json);
    }
    if args.tokens {
        mounts.close().await;
        return tokens(&tools, args.json);
    }
    // Withheld tools are listed last, marked, with their new definition.
    let withheld: Vec<(prise_mcp::Withheld, Option<serde_json::Value>)> =
        withheld(&mounts, only, Declaration::Tool)
            .into_iter()
            .map(|w| {
                let definition = mounts
                    .mounts()
                    .iter()
                    .find(|m| m.name() == w.server)
                    .and_then(|m| m.declared(Declaration::Tool, &w.declared));
                (w, definition)
            })
            .collect();
    mounts.close().await;
    let items = tools
        .iter()
        .map(|t| {
            (
                json!({"name": t.name, "server": t.server, "tool": t.tool}),
                tool_row(t),
            )
        })
        .chain(withheld.iter().map(|(w, definition)| {
            (
                json!({"name": w.name, "server": w.server, "tool": definition, "withheld": w.change}),
                vec![w.name.clone(), withheld_note(w)],
            )
        }));
    listing(args.json, &TOOLS_HEADER, items)
}

/// What `mounts` withhold of `declaration`, of `only`'s server or all.
fn withheld(
    mounts: &prise_mcp::Mounts,
    only: Option<&str>,
    declaration: Declaration,
) -> Vec<prise_mcp::Withheld> {
    mounts
        .withheld()
        .into_iter()
        .filter(|w| w.declaration == declaration && keeps(only, &w.server))
        .collect()
}

/// `WITHHELD: how; prise trust ...`, for a listing's row.
fn withheld_note(w: &prise_mcp::Withheld) -> String {
    format!(
        "WITHHELD: {}; `prise trust {} {}` shows the change",
        w.change.describe(),
        w.server,
        w.declared
    )
}

/// `prise tools --search QUERY`: the tools that fit a task best, best first, with
/// their scores (BM25, see [`prise_search`]).
fn search(
    tools: &[prise_mcp::ExposedTool],
    query: &str,
    limit: usize,
    json: bool,
) -> Result<(), Failure> {
    let index = prise_search::ToolIndex::new(
        tools
            .iter()
            .map(|t| (t.name.as_str(), t.server.as_str(), &t.tool)),
    );
    let found = index.search(query, limit);
    if found.is_empty() && !json {
        eprintln!("no tool matches {query:?}; `prise tools` lists them all");
    }
    let items = found.iter().filter_map(|hit| {
        let tool = tools.iter().find(|t| t.name == hit.name)?;
        let mut row = tool_row(tool);
        row.insert(1, format!("{:.2}", hit.score));
        Some((
            json!({"name": tool.name, "server": tool.server, "score": hit.score, "tool": tool.tool}),
            row,
        ))
    });
    listing(json, &["TOOL", "SCORE", "DESCRIPTION"], items)
}

/// `prise tools --tokens`: what each definition costs in every request, and the total.
fn tokens(tools: &[prise_mcp::ExposedTool], json: bool) -> Result<(), Failure> {
    let counts = prise_agent::offer::tool_tokens(tools);
    let total: usize = counts.iter().sum();
    let items = tools.iter().zip(&counts).map(|(tool, tokens)| {
        (
            json!({"name": tool.name, "server": tool.server, "tokens": tokens}),
            vec![tool.name.clone(), tokens.to_string()],
        )
    });
    listing(json, &["TOOL", "TOKENS"], items)?;
    if !json {
        println!("{}", tokens_line(tools.len(), total));
    }
    Ok(())
}

/// `N tools, about T tokens in each request ...`.
fn tokens_line(tools: usize, total: usize) -> String {
    let search = if total > prise_agent::offer::AUTO_THRESHOLD_TOKENS {
        "over"
    } else {
        "under"
    };
    format!(
        "{tools} tools: about {total} tokens of definitions in each request to the model ({search} the {} at which \"toolSearch\": \"auto\" searches instead)",
        prise_agent::offer::AUTO_THRESHOLD_TOKENS
    )
}

/// The header of the tools table.
pub const TOOLS_HEADER: [&str; 2] = ["TOOL", "DESCRIPTION"];

/// A tool's row in the tools table: its exposed name and its description's first
/// line, cut to fit.
pub fn tool_row(tool: &prise_mcp::ExposedTool) -> Vec<String> {
    let description = tool
        .tool
        .description
        .as_deref()
        .or(tool.tool.title.as_deref())
        .unwrap_or("");
    vec![tool.name.clone(), first_line(description)]
}

/// `prise tools SERVER__TOOL`: one tool in detail.
async fn tool(servers: Servers, exposed: &str, json: bool) -> Result<(), Failure> {
    // The schema shown as the model's is the one the configured provider is sent.
    let provider = servers
        .config
        .as_ref()
        .and_then(|c| c.model.name.as_deref())
        .unwrap_or(crate::commands::run::DEFAULT_MODEL)
        .parse::<prise_llm::ModelSpec>()
        .map_or(prise_llm::Provider::Ollama, |spec| spec.provider);
    let mounts = servers.mount_for(Wanted::Owner(exposed)).await?;
    let tools = mounts.tools();
    mounts.close().await;
    match tools.iter().find(|t| t.name == exposed) {
        Some(tool) => crate::commands::describe::tool(tool, provider, json),
        None => {
            let suggestion =
                prise_mcp::registry::closest(exposed, tools.iter().map(|t| t.name.as_str()))
                    .map(|s| format!("; did you mean {s}?"))
                    .unwrap_or_default();
            Err(Failure::usage(
                format!("no tool named {exposed}{suggestion}"),
                "`prise tools` lists the tools".to_owned(),
            ))
        }
    }
}

/// The servers a listing restricted to `only` needs.
fn wanted(only: Option<&str>) -> Wanted<'_> {
    only.map_or(Wanted::All, Wanted::Server)
}

/// Whether an item of `server` is in a listing restricted to `only`.
fn keeps(only: Option<&str>, server: &str) -> bool {
    only.is_none_or(|s| s == server)
}

/// `prise call`: one tool call; the text of the result, or all of it with `--json`.
pub async fn call(servers: Servers, args: CallArgs) -> Result<(), Failure> {
    let arguments = parse_arguments(&args.arguments)?;
    let result = ask(
        servers,
        Wanted::Owner(&args.tool),
        async |mounts: &Mounts| {
            let server = mounts.server_of_tool(&args.tool).unwrap_or_default();
            let call = mounts.call_tool(&args.tool, Some(arguments));
            crate::progress::watch(mounts.subscribe(), &server, &args.tool, call).await
        },
    )
    .await?;
    print(args.json, &result, write_result)?;
    if result.is_error == Some(true) {
        return Err(Failure::Job(anyhow::anyhow!(
            "{} reported an error",
            args.tool
        )));
    }
    Ok(())
}

/// `prise resources`: resources and resource templates.
pub async fn resources(servers: Servers, args: ResourcesArgs) -> Result<(), Failure> {
    let only = args.server.as_deref();
    let mounts = servers.mount_for(wanted(only)).await?;
    let resources: Vec<_> = mounts
        .resources()
        .into_iter()
        .filter(|(s, _)| keeps(only, s))
        .collect();
    let templates: Vec<_> = mounts
        .resource_templates()
        .into_iter()
        .filter(|(s, _)| keeps(only, s))
        .collect();
    let withheld_templates = withheld(&mounts, only, Declaration::ResourceTemplate);
    mounts.close().await;
    let resources = resources.iter().map(|(server, r)| {
        let name = r.title.clone().unwrap_or_else(|| r.name.clone());
        let row = vec![
            server.clone(),
            r.uri.clone(),
            name,
            r.mime_type.clone().unwrap_or_default(),
        ];
        (json!({"server": server, "resource": r}), row)
    });
    let templates = templates.iter().map(|(server, t)| {
        let name = t.title.clone().unwrap_or_else(|| t.name.clone());
        let row = vec![
            server.clone(),
            t.uri_template.clone(),
            name,
            "(template)".to_owned(),
        ];
        (json!({"server": server, "template": t}), row)
    });
    let withheld = withheld_templates.iter().map(|w| {
        let row = vec![
            w.server.clone(),
            w.name.clone(),
            withheld_note(w),
            "(template)".to_owned(),
        ];
        (
            json!({"server": w.server, "uriTemplate": w.name, "withheld": w.change}),
            row,
        )
    });
    listing(
        args.json,
        &["SERVER", "URI", "NAME", "TYPE"],
        resources.chain(templates).chain(withheld),
    )
}

/// `prise read`: one resource's contents.
pub async fn read(servers: Servers, args: ReadArgs) -> Result<(), Failure> {
    let server = args.server.as_deref();
    let wanted = server.map_or(Wanted::All, Wanted::Server);
    let result = ask(servers, wanted, async |mounts: &Mounts| {
        mounts.read_resource(&args.uri, server).await
    })
    .await?;
    if let Some(path) = &args.output {
        return write_file(path, &args.uri, &result.contents);
    }
    print(args.json, &result, |out, result| {
        result
            .contents
            .iter()
            .try_for_each(|c| write_contents(out, c))
    })
}

/// `prise read -o FILE`: the one content of a resource, its bytes as they are.
fn write_file(
    path: &std::path::Path,
    uri: &str,
    contents: &[ResourceContents],
) -> Result<(), Failure> {
    use base64::Engine;
    let [content] = contents else {
        return Err(Failure::usage(
            format!("{uri} has {} contents; -o writes one", contents.len()),
            "--json shows them all".to_owned(),
        ));
    };
    let bytes = match content {
        ResourceContents::TextResourceContents { text, .. } => text.clone().into_bytes(),
        ResourceContents::BlobResourceContents { blob, .. } => {
            base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .map_err(|e| anyhow::anyhow!("the server sent {uri} as invalid base64: {e}"))?
        }
        _ => {
            return Err(Failure::Job(anyhow::anyhow!(
                "{uri}: contents of an unknown kind"
            )));
        }
    };
    std::fs::write(path, &bytes)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    eprintln!("wrote {} bytes to {}", bytes.len(), path.display());
    Ok(())
}

/// `prise prompts`: every prompt and its arguments (`*` marks required ones).
pub async fn prompts(servers: Servers, args: PromptsArgs) -> Result<(), Failure> {
    let only = args.server.as_deref();
    let mounts = servers.mount_for(wanted(only)).await?;
    let prompts: Vec<_> = mounts
        .prompts()
        .into_iter()
        .filter(|p| keeps(only, &p.server))
        .collect();
    let withheld_prompts = withheld(&mounts, only, Declaration::Prompt);
    mounts.close().await;
    let withheld = withheld_prompts.iter().map(|w| {
        let row = vec![w.name.clone(), String::new(), withheld_note(w)];
        (
            json!({"name": w.name, "server": w.server, "withheld": w.change}),
            row,
        )
    });
    let items = prompts.iter().map(|p| {
        let arguments: Vec<String> = p
            .prompt
            .arguments
            .iter()
            .flatten()
            .map(|a| {
                if a.required == Some(true) {
                    format!("{}*", a.name)
                } else {
                    a.name.clone()
                }
            })
            .collect();
        let description = first_line(p.prompt.description.as_deref().unwrap_or(""));
        (
            json!({"name": p.name, "server": p.server, "prompt": p.prompt}),
            vec![p.name.clone(), arguments.join(" "), description],
        )
    });
    listing(
        args.json,
        &["PROMPT", "ARGUMENTS", "DESCRIPTION"],
        items.chain(withheld),
    )
}

/// `prise prompt NAME key=value...`: the prompt's messages.
pub async fn prompt(servers: Servers, args: PromptArgs) -> Result<(), Failure> {
    let name = args.name.as_str();
    let mounts = servers.mount_for(Wanted::Owner(name)).await?;
    // The arguments are checked against the prompt's declaration before asking.
    let arguments = match prompt_arguments::declared(&mounts, name) {
        Some(declared) => prompt_arguments::prompt_arguments(
            name,
            &declared,
            &args.arguments,
            &args.arguments.join(" "),
            &format!("prise prompt {name}"),
        )
        .map_err(|e| {
            Failure::usage(
                e,
                "`prise prompts` lists each prompt's arguments (* for required)".to_owned(),
            )
        }),
        // Asked all the same, so that the refusal names the change and `prise trust`.
        None if withheld(&mounts, None, Declaration::Prompt)
            .iter()
            .any(|w| w.name == name) =>
        {
            Ok(JsonObject::new())
        }
        None => Err(Failure::usage(
            format!(
                "no prompt named {name}{}",
                prise_mcp::registry::closest(
                    name,
                    mounts.prompts().iter().map(|p| p.name.as_str())
                )
                .map(|s| format!("; did you mean {s}?"))
                .unwrap_or_default()
            ),
            "`prise prompts` lists them".to_owned(),
        )),
    };
    let result = match arguments {
        Ok(arguments) => mounts
            .get_prompt(name, Some(arguments))
            .await
            .map_err(call_failure),
        Err(failure) => Err(failure),
    };
    mounts.close().await;
    let result = result?;
    print(args.json, &result, |out, result| {
        for message in &result.messages {
            let role = serde_json::to_value(&message.role)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            write!(out, "{role}: ")?;
            write_block(out, &message.content)?;
        }
        Ok(())
    })
}

/// Reads call arguments: a JSON object, or `-` for stdin.
fn parse_arguments(text: &str) -> Result<JsonObject, Failure> {
    let text = if text == "-" {
        let mut buffer = String::new();
        std::io::stdin().read_to_string(&mut buffer)?;
        if buffer.trim().is_empty() {
            return Err(Failure::usage(
                "no arguments on stdin (`-` reads the tool's arguments from there)",
                r#"e.g. echo '{"keyword": "config"}' | prise call docs__grep_docs -"#.to_owned(),
            ));
        }
        buffer
    } else {
        text.to_owned()
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Failure::usage(
            "tool arguments must be a JSON object",
            r#"e.g. '{"keyword": "config"}'"#.to_owned(),
        )),
        Err(e) => Err(Failure::usage(
            format!("tool arguments are not valid JSON: {e}"),
            r#"e.g. '{"keyword": "config"}'"#.to_owned(),
        )),
    }
}

/// Prints a tool result for a person: each block as [`write_block`] does, and the
/// structured content when there is no text.
fn write_result(out: &mut impl Write, result: &CallToolResult) -> std::io::Result<()> {
    for block in &result.content {
        write_block(out, block)?;
    }
    let has_text = result
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Text(_)));
    if !has_text && let Some(structured) = &result.structured_content {
        serde_json::to_writer_pretty(&mut *out, structured)?;
        writeln!(out)?;
    }
    Ok(())
}

/// Text as it is; anything else as a one-line note (`--json` shows it whole).
fn write_block(out: &mut impl Write, block: &ContentBlock) -> std::io::Result<()> {
    match block {
        ContentBlock::Text(text) => write_text(out, &text.text),
        ContentBlock::Image(image) => writeln!(
            out,
            "[image: {}, {} bytes base64]",
            image.mime_type,
            image.data.len()
        ),
        ContentBlock::Audio(audio) => writeln!(
            out,
            "[audio: {}, {} bytes base64]",
            audio.mime_type,
            audio.data.len()
        ),
        ContentBlock::ResourceLink(link) => writeln!(out, "[resource link: {}]", link.uri),
        ContentBlock::Resource(embedded) => write_contents(out, &embedded.resource),
        other => writeln!(out, "{}", serde_json::to_string(other).unwrap_or_default()),
    }
}

fn write_contents(out: &mut impl Write, contents: &ResourceContents) -> std::io::Result<()> {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => write_text(out, text),
        ResourceContents::BlobResourceContents {
            blob,
            mime_type,
            uri,
            ..
        } => {
            writeln!(
                out,
                "[binary {uri}: {}, {} bytes base64]",
                mime_type.as_deref().unwrap_or("unknown type"),
                blob.len()
            )
        }
        other => writeln!(out, "{}", serde_json::to_string(other).unwrap_or_default()),
    }
}

/// A server's text: as it is for a pipe, [`output::printable`] for a person.
fn write_text(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    if std::io::stdout().is_terminal() {
        out.write_all(output::printable(text).as_bytes())?;
    } else {
        out.write_all(text.as_bytes())?;
    }
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    Ok(())
}

/// Mounts, makes one request, and closes; a failed request becomes a [`Failure`].
async fn ask<T>(
    servers: Servers,
    wanted: Wanted<'_>,
    request: impl AsyncFnOnce(&Mounts) -> Result<T, CallError>,
) -> Result<T, Failure> {
    let mounts = servers.mount_for(wanted).await?;
    let result = request(&mounts).await;
    mounts.close().await;
    result.map_err(call_failure)
}

/// Prints one result: whole as JSON with `--json`, otherwise as `human` writes it.
fn print<T: serde::Serialize>(
    json: bool,
    value: &T,
    human: impl FnOnce(&mut output::Stdout, &T) -> std::io::Result<()>,
) -> Result<(), Failure> {
    let mut out = output::stdout();
    if json {
        output::json(&mut out, value)?;
    } else {
        human(&mut out, value)?;
    }
    out.flush()?;
    Ok(())
}

/// Prints a listing: with `--json` an array of each item's object, otherwise a table of
/// each item's row.
fn listing(
    json: bool,
    header: &[&str],
    items: impl Iterator<Item = (Value, Vec<String>)>,
) -> Result<(), Failure> {
    let (objects, rows): (Vec<Value>, Vec<Vec<String>>) = items.unzip();
    let mut out = output::stdout();
    if json {
        output::json(&mut out, &objects)?;
    } else {
        output::table(&mut out, header, &rows)?;
    }
    out.flush()?;
    Ok(())
}

/// A name the user got wrong is a usage error (2); a server that failed is a job
/// failure (1).
fn call_failure(error: CallError) -> Failure {
    match &error {
        CallError::UnknownTool { .. } => {
            Failure::usage(&error, "`prise tools` lists the tools".to_owned())
        }
        CallError::NotFound(_) => Failure::usage(&error, None),
        CallError::UnknownResource { servers, .. } if servers.is_empty() => Failure::usage(
            &error,
            "`prise resources` lists the resources and templates; --server NAME asks one server"
                .to_owned(),
        ),
        CallError::UnknownResource { .. } => {
            Failure::usage(&error, "--server NAME chooses the server to ask".to_owned())
        }
        _ => Failure::Job(error.into()),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > 100 {
        format!("{}…", line.chars().take(99).collect::<String>())
    } else {
        line.to_owned()
    }
}
