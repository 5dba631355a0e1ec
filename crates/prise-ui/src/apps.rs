//! MCP Apps (the `io.modelcontextprotocol/ui` extension): a tool that declares a
//! `ui://` resource in `_meta.ui.resourceUri` is shown as that HTML page, in a
//! sandboxed frame of the page, under the Content Security Policy the resource
//! declares. The frame talks to the page over `postMessage` (the bridge is in
//! `assets/apps.js`); the tool calls it makes come here, to the approval policy.

use std::sync::Arc;

use prise_agent::Approvals;
use prise_mcp::Mounts;
use prise_mcp::model::{CallToolResult, JsonObject, ResourceContents};
use serde_json::Value;

/// The MIME type of an app's page.
pub(crate) const APP_MIME: &str = "text/html;profile=mcp-app";

/// The `ui://` resource a tool (as JSON) is shown with, if any.
pub(crate) fn resource_of(tool: &Value) -> Option<String> {
    let meta = &tool["_meta"];
    // `ui/resourceUri` is the key of the extension's drafts, still sent by servers.
    let uri = meta["ui"]["resourceUri"]
        .as_str()
        .or_else(|| meta["ui/resourceUri"].as_str())?;
    uri.starts_with("ui://").then(|| uri.to_owned())
}

/// Whether an app may call the tool (as JSON): unless its `visibility` leaves apps out.
fn visible_to_apps(tool: &Value) -> bool {
    match tool["_meta"]["ui"]["visibility"].as_array() {
        Some(audiences) => audiences.iter().any(|a| a == "app"),
        None => true,
    }
}

/// An app's page and the policy it is served under.
pub(crate) struct AppPage {
    pub html: String,
    pub csp: String,
}

/// The page of the app `tool` (an exposed name) is shown with, read from its server,
/// with the CSP its resource declares; `frame_ancestors` are the page's own origins.
pub(crate) async fn page(
    mounts: &Mounts,
    tool: &str,
    frame_ancestors: &[String],
) -> Result<AppPage, String> {
    let (exposed, json) =
        exposed_tool(mounts, tool).ok_or_else(|| format!("no tool named {tool}"))?;
    let uri = resource_of(&json).ok_or_else(|| format!("{tool} declares no ui:// resource"))?;
    let read = mounts
        .read_resource(&uri, Some(&exposed.server))
        .await
        .map_err(|e| format!("cannot read {uri}: {e}"))?;
    let (html, meta) = read
        .contents
        .into_iter()
        .find_map(|content| match content {
            ResourceContents::TextResourceContents {
                text,
                mime_type,
                meta,
                ..
            } if mime_type
                .as_deref()
                .is_none_or(|m| m.starts_with("text/html")) =>
            {
                Some((text, meta))
            }
            _ => None,
        })
        .ok_or_else(|| format!("{uri} holds no HTML ({APP_MIME})"))?;
    // The policy may come with the content or with the resource's listing.
    let declared = meta
        .and_then(|m| serde_json::to_value(m).ok())
        .filter(|m| m["ui"]["csp"].is_object())
        .or_else(|| {
            mounts
                .resources()
                .into_iter()
                .find(|(server, r)| *server == exposed.server && r.uri == uri)
                .and_then(|(_, r)| serde_json::to_value(r).ok())
                .map(|r| r["_meta"].clone())
        })
        .unwrap_or_default();
    Ok(AppPage {
        html,
        csp: csp(&declared["ui"]["csp"], frame_ancestors),
    })
}

/// The Content Security Policy of an app's page: nothing from anywhere but what its
/// resource declares (`connectDomains`, `resourceDomains`, `frameDomains`,
/// `baseUriDomains`), inline scripts and styles (an app is one HTML file), and the
/// `sandbox` that gives it an origin of its own (opaque), whatever frame it is in.
pub(crate) fn csp(declared: &Value, frame_ancestors: &[String]) -> String {
    let domains = |key: &str| -> Vec<String> {
        declared[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|d| is_source(d))
            .map(str::to_owned)
            .collect()
    };
    let or_none = |list: Vec<String>| {
        if list.is_empty() {
            "'none'".to_owned()
        } else {
            list.join(" ")
        }
    };
    let resources = domains("resourceDomains").join(" ");
    let with = |fixed: &str| format!("{fixed} {resources}").trim().to_owned();
    [
        "default-src 'none'".to_owned(),
        format!("script-src {}", with("'unsafe-inline'")),
        format!("style-src {}", with("'unsafe-inline'")),
        format!("img-src {}", with("data: blob:")),
        format!("font-src {}", with("data:")),
        format!("media-src {}", with("data: blob:")),
        format!("connect-src {}", or_none(domains("connectDomains"))),
        format!("frame-src {}", or_none(domains("frameDomains"))),
        format!("base-uri {}", or_none(domains("baseUriDomains"))),
        "form-action 'none'".to_owned(),
        format!("frame-ancestors {}", frame_ancestors.join(" ")),
        "sandbox allow-scripts allow-forms".to_owned(),
    ]
    .join("; ")
}

/// Whether a declared domain is a plain source expression (`https://host[:port]`, a
/// `*.` wildcard host): anything else could end the directive and add another.
fn is_source(domain: &str) -> bool {
    let Some((scheme, rest)) = domain.split_once("://") else {
        return false;
    };
    let host = rest.strip_prefix("*.").unwrap_or(rest);
    matches!(scheme, "https" | "http" | "wss" | "ws")
        && !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
}

/// The mounted tool of this exposed name, with its definition as JSON (where the
/// extension's `_meta` keys are read).
fn exposed_tool(mounts: &Mounts, name: &str) -> Option<(prise_mcp::ExposedTool, Value)> {
    let tool = mounts.tools().into_iter().find(|t| t.name == name)?;
    let json = serde_json::to_value(&tool.tool).unwrap_or_default();
    Some((tool, json))
}

/// A tool call an app made: `name` on the server of `tool`, the tool the app is shown
/// with, once the approval policy allows it (asking the page when it says ask).
pub(crate) async fn call(
    mounts: &Mounts,
    approvals: &Arc<Approvals>,
    tool: &str,
    name: &str,
    arguments: Option<JsonObject>,
) -> Result<CallToolResult, String> {
    let server = mounts
        .server_of_tool(tool)
        .ok_or_else(|| format!("no tool named {tool}"))?;
    let exposed = prise_mcp::exposed_name(&server, name);
    let (callee, json) = exposed_tool(mounts, &exposed)
        .ok_or_else(|| format!("server {server} has no tool named {name}"))?;
    if !visible_to_apps(&json) {
        return Err(format!(
            "{exposed} is not offered to apps (its visibility leaves them out)"
        ));
    }
    let read_only = callee
        .tool
        .annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false);
    let text = arguments
        .as_ref()
        .map(|a| Value::Object(a.clone()).to_string())
        .unwrap_or_default();
    approvals
        .check(&exposed, read_only, &text)
        .await
        .map_err(|refusal| format!("{exposed} was not run: {refusal}"))?;
    mounts
        .call_tool(&exposed, arguments)
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_resource_is_found_under_either_key() {
        assert_eq!(
            resource_of(&json!({"_meta": {"ui": {"resourceUri": "ui://a/b"}}})).as_deref(),
            Some("ui://a/b")
        );
        assert_eq!(
            resource_of(&json!({"_meta": {"ui/resourceUri": "ui://a/c"}})).as_deref(),
            Some("ui://a/c")
        );
        assert_eq!(
            resource_of(&json!({"_meta": {"ui": {"resourceUri": "https://x"}}})),
            None
        );
        assert_eq!(resource_of(&json!({"name": "t"})), None);
    }

    #[test]
    fn the_policy_grants_what_is_declared_and_nothing_smuggled() {
        let ancestors = ["http://127.0.0.1:1".to_owned()];
        let none = csp(&Value::Null, &ancestors);
        assert!(none.contains("connect-src 'none'"), "{none}");
        assert!(none.contains("default-src 'none'"));
        assert!(none.ends_with("sandbox allow-scripts allow-forms"));
        let declared = json!({
            "connectDomains": ["https://api.example.com", "https://x; script-src *"],
            "resourceDomains": ["https://*.cdn.example", "javascript:alert(1)"],
        });
        let some = csp(&declared, &ancestors);
        assert!(
            some.contains("connect-src https://api.example.com;"),
            "{some}"
        );
        assert!(
            some.contains("script-src 'unsafe-inline' https://*.cdn.example;"),
            "{some}"
        );
        assert!(!some.contains("script-src *"), "{some}");
        assert!(!some.contains("javascript"), "{some}");
        assert!(
            some.contains("frame-ancestors http://127.0.0.1:1;"),
            "{some}"
        );
    }
}
