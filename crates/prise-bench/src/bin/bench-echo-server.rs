//! `bench-echo-server [--http ADDR]`: the fast server every client is measured against:
//! one tool, `echo`, served by rmcp over stdio, or over Streamable HTTP through prise's
//! own HTTP serving. Prints the URL on stdout in HTTP mode.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};

#[derive(Clone)]
struct Echo {
    tool_router: ToolRouter<Echo>,
}

/// Arguments of `echo`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text to send back.
    message: String,
}

#[tool_router]
impl Echo {
    /// Send the message back.
    #[tool]
    fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(message)])
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let server = Echo {
        tool_router: Echo::tool_router(),
    };
    match prise_bench::arg(&args, "--http") {
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(address).await?;
            println!("http://{}/mcp", listener.local_addr()?);
            let options = prise_servers::serve::HttpOptions::default();
            prise_servers::serve::http(server, listener, options, std::future::pending()).await
        }
        None => prise_servers::serve::stdio(server).await,
    }
}
