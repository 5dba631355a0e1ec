//! Streamable HTTP, through rmcp's client and reqwest with rustls on the ring provider.

use std::collections::HashMap;
use std::sync::Once;

use prise_config::Remote;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

/// Headers the transport sets itself; a configured value would break the protocol.
const MANAGED: [&str; 3] = ["accept", "mcp-session-id", "last-event-id"];

/// A transport for one remote server, with its configured headers.
pub(crate) fn transport(
    remote: &Remote,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    install_crypto();
    let mut headers = HashMap::new();
    for (name, value) in &remote.headers {
        if MANAGED.iter().any(|m| name.eq_ignore_ascii_case(m)) {
            return Err(format!(
                "header {name} is set by the transport; remove it from the configuration"
            ));
        }
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("{name:?} is not a valid header name"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header {name} is not valid in HTTP"))?;
        headers.insert(header, value);
    }
    let client = client()?;
    let config =
        StreamableHttpClientTransportConfig::with_uri(remote.url.as_str()).custom_headers(headers);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// An HTTP client for one server.
pub(crate) fn client() -> Result<reqwest::Client, String> {
    install_crypto();
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))
}

/// rustls needs a process-wide crypto provider; prise uses ring, which builds in
/// seconds where aws-lc-sys takes minutes on two cores.
fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
