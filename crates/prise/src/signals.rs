//! Ctrl-C and SIGTERM: every server process ended, a clean line, the exit code.

use std::io::IsTerminal;

use crate::commands::mounted;
use crate::failure::Failure;

/// Runs `work` until it ends or a signal arrives; on a signal every server process is
/// ended, the servers still starting are named, and the exit code says which signal.
pub async fn until_signal(work: impl Future<Output = Result<(), Failure>>) -> Result<(), Failure> {
    tokio::select! {
        result = work => result,
        signal = interrupted() => {
            prise_mcp::child::kill_all_children();
            let pending = mounted::still_starting();
            if !pending.is_empty() {
                if std::io::stderr().is_terminal() {
                    // Over the "mounting N servers…" line.
                    eprint!("\r\x1b[2K");
                }
                eprintln!("interrupted while mounting; still starting: {}", pending.join(", "));
            }
            Err(Failure::Interrupted(signal))
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM with the signal number.
pub async fn interrupted() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => 2,
        _ = term.recv() => 15,
    }
}
