//! `prise scan`: every mounted tool's definition screened for text aimed at the
//! model (see [`prise_trust::screen`]), offline.

use std::io::Write;

use prise_mcp::ExposedTool;
use prise_trust::screen::{Declared, Finding, screen};
use serde_json::{Value, json};

use crate::cli::ScanArgs;
use crate::commands::mounted::{Servers, Wanted};
use crate::failure::Failure;
use crate::output;

/// Screens the tools of every server (or of `--server`'s), each against the tools of
/// the other servers (whose mention is shadowing). A table, or `--json`; exit 1 when
/// any tool has a finding, so that a script can stop on it.
pub async fn scan(servers: Servers, args: ScanArgs) -> Result<(), Failure> {
    // Every server, even for one: shadowing is about the others.
    let mounts = servers.mount_for(Wanted::All).await?;
    let tools = mounts.tools();
    mounts.close().await;
    let reports: Vec<(&ExposedTool, Vec<Finding>)> = tools
        .iter()
        .filter(|t| args.server.as_deref().is_none_or(|s| s == t.server))
        .map(|tool| (tool, screen_one(tool, &tools)))
        .collect();
    let mut out = output::stdout();
    if args.json {
        let objects: Vec<Value> = reports
            .iter()
            .map(|(tool, findings)| json!({"tool": tool.name, "findings": findings}))
            .collect();
        output::json(&mut out, &objects)?;
    } else {
        let mut rows = Vec::new();
        for (tool, findings) in &reports {
            if findings.is_empty() {
                rows.push(vec![tool.name.clone(), "clean".to_owned(), String::new()]);
            }
            for finding in findings {
                rows.push(vec![
                    tool.name.clone(),
                    finding.kind.as_str().to_owned(),
                    finding.detail.clone(),
                ]);
            }
        }
        output::table(&mut out, &["TOOL", "FINDING", "DETAIL"], &rows)?;
    }
    out.flush()?;
    let flagged = reports.iter().filter(|(_, f)| !f.is_empty()).count();
    if flagged > 0 {
        return Err(Failure::Job(anyhow::anyhow!(
            "{flagged} of {} tools have findings; read their definitions with `prise tools SERVER__TOOL`",
            reports.len()
        )));
    }
    Ok(())
}

/// The findings of `tool`, the other servers' tools named by their own and exposed
/// names.
fn screen_one(tool: &ExposedTool, all: &[ExposedTool]) -> Vec<Finding> {
    let others: Vec<&str> = all
        .iter()
        .filter(|other| other.server != tool.server)
        .flat_map(|other| [other.tool.name.as_ref(), other.name.as_str()])
        .collect();
    let schema = Value::Object((*tool.tool.input_schema).clone());
    let declared = Declared {
        name: &tool.tool.name,
        description: tool.tool.description.as_deref().unwrap_or_default(),
        input_schema: &schema,
    };
    screen(&declared, &others)
}
