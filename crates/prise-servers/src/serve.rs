//! Running a server: in this process, over stdio, or over Streamable HTTP.

use rmcp::{ServerHandler, ServiceExt};

/// Bytes buffered in each direction of an in-process connection.
const IN_PROCESS_BUFFER: usize = 256 * 1024;

/// Starts `server` on a task of the current runtime and returns the client's end of an
/// in-memory connection to it: no process, no socket.
pub fn in_process<S: ServerHandler>(server: S) -> tokio::io::DuplexStream {
    let (client, server_end) = tokio::io::duplex(IN_PROCESS_BUFFER);
    tokio::spawn(async move {
        match server.serve(server_end).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::error!("in-process server failed to start: {e}"),
        }
    });
    client
}

/// Serves `server` on stdin and stdout until the client closes stdin.
pub async fn stdio<S: ServerHandler>(server: S) -> std::io::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
