//! Ctrl-C and SIGTERM: every server process ended, a clean line, the exit code.

use std::io::IsTerminal;

use crate::commands::mounted;
use crate::failure::Failure;

/// How long an interrupted run waits for servers to take in the cancellation of the
/// tasks it was following.
const TASK_CANCEL_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs `work` until it ends or a signal arrives; on a signal every server process is
/// ended, the servers still starting are named, and the exit code says which signal.
pub async fn until_signal(work: impl Future<Output = Result<(), Failure>>) -> Result<(), Failure> {
    tokio::select! {
        result = work => result,
        signal = interrupted() => {
            // Servers go on with a task nobody waits for unless told; stdio servers
            // are ended right after, so the wait is for remote ones.
            prise_mcp::tasks::cancel_all(TASK_CANCEL_WAIT).await;
            prise_mcp::kill_all_children();
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
