//! `prise-conformance-client`: the client the conformance suite drives.
//!
//! The suite starts a test server, then runs this program with the server's URL as
//! the last argument, the scenario's name in `MCP_CONFORMANCE_SCENARIO` and, for some
//! scenarios, data in `MCP_CONFORMANCE_CONTEXT` (a pre-registered client). It mounts
//! the URL exactly as `prise` would (through prise-config and prise-mcp, protocol
//! `auto`, signing in where the server asks), does what the scenario asks of a
//! client, and exits 0, or 1 with the error.
//!
//! The one thing that differs from `prise`: the person's part of a sign-in. The
//! suite's authorization server answers at once with a redirect, so this client is
//! its own user agent ([`Headless`]): it follows the authorization URL and hands the
//! redirect back, where `prise` would open a browser.

use std::process::ExitCode;
use std::sync::Arc;

use prise_mcp::auth::{BoxFuture, PersonError, Return, SignIn};
use prise_mcp::{MountOptions, Mounts, Source};
use serde_json::{Value, json};

/// Where the suite's authorization server is told to send the user agent back. Nothing
/// listens there: [`Headless`] reads the redirect instead of following it.
const REDIRECT_URI: &str = "http://127.0.0.1:3000/callback";
/// A Client ID Metadata Document URL, for authorization servers that take them.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: prise-conformance-client URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    match run(&url, &scenario, &context).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(1)
        }
    }
}

/// A user agent that follows the authorization URL itself and returns the redirect.
#[derive(Debug)]
struct Headless;

struct HeadlessReturn;

impl SignIn for Headless {
    fn listen(&self, _port: Option<u16>) -> BoxFuture<'_, Result<Box<dyn Return>, PersonError>> {
        Box::pin(async { Ok(Box::new(HeadlessReturn) as Box<dyn Return>) })
    }
}

impl Return for HeadlessReturn {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.to_owned()
    }

    fn visit(
        self: Box<Self>,
        _server: String,
        url: String,
    ) -> BoxFuture<'static, Result<String, PersonError>> {
        Box::pin(async move {
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let response = client.get(&url).send().await.map_err(|e| e.to_string())?;
            response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| {
                    PersonError(format!(
                        "the authorization server answered {} without a redirect",
                        response.status()
                    ))
                })
        })
    }
}

/// Mounts the test server as `test` and runs the scenario's client side.
async fn run(url: &str, scenario: &str, context: &Value) -> Result<(), String> {
    let mut oauth = json!({ "clientMetadataUrl": CLIENT_METADATA_URL });
    if let Some(id) = context["client_id"].as_str() {
        oauth["clientId"] = json!(id);
    }
    if let Some(secret) = context["client_secret"].as_str() {
        oauth["clientSecret"] = json!(secret);
    }
    // The suite's machine-to-machine scenarios say so by name, as a person would by
    // configuring it.
    if scenario.starts_with("auth/client-credentials") {
        oauth["clientCredentials"] = json!(true);
    }
    if let Some(key) = context["private_key_pem"].as_str() {
        oauth["privateKey"] = json!(key);
    }
    // Workload identity federation: the platform's token for this workload.
    if let Some(token) = context["valid_jwt"].as_str() {
        oauth["workloadToken"] = json!(token);
    }
    // Enterprise-managed authorization: the person's ID token from the company's
    // identity provider, as single sign-on left it.
    if let (Some(issuer), Some(id_token)) = (
        context["idp_issuer"].as_str(),
        context["idp_id_token"].as_str(),
    ) {
        oauth["enterprise"] = json!({ "issuer": issuer, "idToken": id_token });
        if let Some(id) = context["idp_client_id"].as_str() {
            oauth["enterprise"]["clientId"] = json!(id);
        }
    }
    let text = json!({ "mcpServers": { "test": { "url": url, "oauth": oauth } } }).to_string();
    let config = prise_config::Config::parse(&text, "conformance.json".as_ref(), &|_| None)
        .map_err(|e| e.to_string())?;
    let sign_ins = std::env::temp_dir().join(format!("prise-conformance-{}", std::process::id()));
    // The elicitation scenario checks that a client fills in the schema's defaults.
    let options = MountOptions {
        elicitor: Arc::new(prise_mcp::elicit::AcceptDefaults),
        log_dir: None,
        eras: None,
        sign_in: Some(Arc::new(Headless)),
        auth_dir: Some(sign_ins.clone()),
        ..MountOptions::default()
    };
    let mounts = Mounts::start(
        config.servers.into_iter().map(Source::from).collect(),
        options,
    )
    .await;
    let outcome = exercise(&mounts, scenario, context).await;
    mounts.close().await;
    let _ = std::fs::remove_dir_all(&sign_ins);
    outcome
}

/// What the scenario asks of a mounted client: the calls its context lists, or else
/// a call of every tool the server offers, as a user trying a server out would make.
/// Every call is made even after one fails; the first failure is the outcome.
async fn exercise(mounts: &Mounts, scenario: &str, context: &Value) -> Result<(), String> {
    if let Some(failure) = mounts.failures().first() {
        return Err(failure.to_string());
    }
    let tools = mounts.tools();
    let calls: Vec<(String, Value)> = if let Some(listed) = context["toolCalls"].as_array() {
        listed
            .iter()
            .filter_map(|c| {
                Some((
                    format!("test__{}", c["name"].as_str()?),
                    c["arguments"].clone(),
                ))
            })
            .collect()
    } else if scenario == "json-schema-2020-12-preservation" {
        // The suite asks for the rich schema to be sent back as it was received, to
        // show that mounting kept every keyword.
        let focal = tools
            .iter()
            .find(|t| t.tool.name == "json_schema_2020_12_tool");
        let schema = focal.map(|t| Value::Object((*t.tool.input_schema).clone()));
        vec![("test__json_schema_echo".into(), json!({ "schema": schema }))]
    } else {
        tools
            .iter()
            .map(|t| (t.name.clone(), example_arguments(&t.tool.input_schema)))
            .collect()
    };
    let mut first_failure = None;
    for (tool, arguments) in calls {
        match mounts
            .call_tool(&tool, arguments.as_object().cloned())
            .await
        {
            Ok(result) => eprintln!(
                "{tool}: {}",
                serde_json::to_string(&result).unwrap_or_default()
            ),
            Err(e) => {
                eprintln!("{tool}: {e}");
                first_failure.get_or_insert(e.to_string());
            }
        }
    }
    first_failure.map_or(Ok(()), Err)
}

/// Arguments for a tool: an example value for each required property, by its type.
fn example_arguments(schema: &serde_json::Map<String, Value>) -> Value {
    let mut arguments = serde_json::Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = &schema.get("properties").unwrap_or(&Value::Null)[name];
        let value = if let Some(first) = property["enum"].as_array().and_then(|e| e.first()) {
            first.clone()
        } else if let Some(default) = property.get("default") {
            default.clone()
        } else {
            match property["type"].as_str() {
                Some("number" | "integer") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("example"),
            }
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}
