//! `prise scan`: every mounted tool's definition screened for text aimed at the
//! model (see [`prise_trust::screen`]), offline; `prise trust`: what a withheld tool,
//! prompt or resource template changed since it was pinned (or what was found in a
//! tool), and its definition accepted (see [`prise_trust::pins`]).

use std::io::Write;

use prise_mcp::ExposedTool;
use prise_trust::pins::{Change, Declaration};
use prise_trust::screen::{Declared, Finding, copied, screen};
use serde_json::{Value, json};

use crate::cli::{ScanArgs, TrustArgs};
use crate::commands::mounted::{Servers, Wanted};
use crate::failure::Failure;
use crate::output;

/// Screens the tools of every server (or of `--server`'s), each against the tools of
/// the other servers (whose mention is shadowing). A table, or `--json`; exit 1 when
/// any tool has a finding, so that a script can stop on it.
pub async fn scan(servers: Servers, args: ScanArgs) -> Result<(), Failure> {
    // Every server, even for one: shadowing is about the others.
    let mounts = servers.mount_for(Wanted::All).await?;
    let shown = mounts.tools();
    // Withheld tools are screened too, as their servers declare them now.
    let withheld = mounts.withheld();
    let mut tools: Vec<(ExposedTool, &str)> = Vec::new();
    for mount in mounts.mounts() {
        let pinned = if mount.pins() { "pinned" } else { "off" };
        for tool in mount.catalog().tools {
            let exposed = prise_mcp::exposed_name(mount.name(), &tool.name);
            let pin = match withheld
                .iter()
                .find(|w| w.declaration == Declaration::Tool && w.name == exposed)
                .map(|w| w.change)
            {
                Some(Change::Changed) => "changed",
                Some(Change::Added) => "added",
                Some(Change::Flagged) => "flagged",
                None if shown.iter().any(|t| t.name == exposed) => pinned,
                // Hidden by the configuration's tool filters.
                None => continue,
            };
            let tool = ExposedTool {
                name: exposed,
                server: mount.name().to_owned(),
                tool,
            };
            tools.push((tool, pin));
        }
    }
    mounts.close().await;
    let all: Vec<ExposedTool> = tools.iter().map(|(t, _)| t.clone()).collect();
    let reports: Vec<(&ExposedTool, &str, Vec<Finding>)> = tools
        .iter()
        .filter(|(t, _)| args.server.as_deref().is_none_or(|s| s == t.server))
        .map(|(tool, pin)| (tool, *pin, screen_one(tool, &all)))
        .collect();
    let mut out = output::stdout();
    if args.json {
        let objects: Vec<Value> = reports
            .iter()
            .map(|(tool, pin, findings)| json!({"tool": tool.name, "pin": pin, "findings": findings}))
            .collect();
        output::json(&mut out, &objects)?;
    } else {
        let mut rows = Vec::new();
        for (tool, pin, findings) in &reports {
            if findings.is_empty() {
                rows.push(vec![
                    tool.name.clone(),
                    pin.to_string(),
                    "clean".to_owned(),
                    String::new(),
                ]);
            }
            for finding in findings {
                rows.push(vec![
                    tool.name.clone(),
                    pin.to_string(),
                    finding.kind.as_str().to_owned(),
                    finding.detail.clone(),
                ]);
            }
        }
        output::table(&mut out, &["TOOL", "PIN", "FINDING", "DETAIL"], &rows)?;
    }
    out.flush()?;
    let flagged = reports.iter().filter(|(_, _, f)| !f.is_empty()).count();
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
    let description = tool.tool.description.as_deref().unwrap_or_default();
    let declared = Declared {
        name: &tool.tool.name,
        description,
        input_schema: &schema,
    };
    let mut findings = screen(&declared, &others);
    let descriptions: Vec<(&str, &str)> = all
        .iter()
        .filter(|other| other.name != tool.name)
        .map(|other| {
            (
                other.name.as_str(),
                other.tool.description.as_deref().unwrap_or_default(),
            )
        })
        .collect();
    findings.extend(copied(description, &descriptions));
    findings
}

/// Shows how each withheld tool, prompt and template of a server (or the one named)
/// differs from its pin, and pins its new definition once the person says yes (or
/// with `--yes`). Without a terminal to ask at, `--yes` is required.
pub async fn trust(servers: Servers, args: TrustArgs) -> Result<(), Failure> {
    let mounts = servers.mount_for(Wanted::Server(&args.server)).await?;
    let outcome = trust_in(&mounts, &args);
    mounts.close().await;
    outcome
}

fn trust_in(mounts: &prise_mcp::Mounts, args: &TrustArgs) -> Result<(), Failure> {
    let Some(mount) = mounts.mounts().iter().find(|m| m.name() == args.server) else {
        return Err(Failure::Job(anyhow::anyhow!(
            "server {} did not start",
            args.server
        )));
    };
    let withheld: Vec<_> = mount
        .withheld()
        .into_iter()
        .filter(|(_, name, _)| args.tool.as_deref().is_none_or(|t| t == name))
        .collect();
    if withheld.is_empty() {
        let what = match &args.tool {
            Some(name) => format!("{name} of server {} is not withheld", args.server),
            None => format!("everything server {} declares is as pinned", args.server),
        };
        eprintln!("{what}; nothing to trust");
        return Ok(());
    }
    let asking = !args.yes;
    if asking && !can_ask() {
        return Err(Failure::usage(
            format!(
                "{} withheld definition(s) of server {} to trust, and no terminal to ask at",
                withheld.len(),
                args.server
            ),
            "run `prise trust` at a terminal to read the changes first, or pass --yes to accept them without asking".to_owned(),
        ));
    }
    let mut out = output::stdout();
    for (declaration, declared, change) in withheld {
        let Some(now) = mount.declared(declaration, &declared) else {
            continue;
        };
        let name = match declaration {
            Declaration::ResourceTemplate => {
                format!("resource template {declared} of {}", args.server)
            }
            _ => format!("{}__{declared}", args.server),
        };
        writeln!(out, "{name}: {}", change.describe())?;
        if change == Change::Flagged {
            let schema = now.get("inputSchema").cloned().unwrap_or_default();
            let declared = Declared {
                name: &declared,
                description: now
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                input_schema: &schema,
            };
            for finding in screen(&declared, &[]) {
                writeln!(
                    out,
                    "  {}: {}",
                    finding.kind.as_str(),
                    output::revealed(&finding.detail)
                )?;
            }
        } else {
            let pinned = mount.pinned(declaration, &declared);
            let difference = prise_trust::diff::difference(declaration, pinned.as_ref(), &now);
            write!(out, "{}", output::revealed(&difference))?;
        }
        out.flush()?;
        if asking && !confirm(&format!("Trust this definition of {name}?")) {
            writeln!(out, "left withheld: {name}")?;
            continue;
        }
        let path = mount
            .trust(declaration, &declared)
            .map_err(|e| Failure::Job(anyhow::anyhow!(e)))?;
        writeln!(out, "trusted: {name} (pinned in {})", path.display())?;
    }
    out.flush()?;
    Ok(())
}

/// Whether a person is at the terminal to answer.
fn can_ask() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks `question` at the terminal; yes only for `y` or `yes`.
fn confirm(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let asked = crate::question::Question::new();
    match asked.read_line() {
        crate::question::Answer::Line(line) => {
            matches!(line.trim().to_lowercase().as_str(), "y" | "yes")
        }
        _ => false,
    }
}
