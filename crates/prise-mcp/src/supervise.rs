//! Restarting stdio servers that exit on their own, as their restart policy says.
//!
//! A crash ends the requests in flight with an error (they are not replayed: a tool
//! call may not be safe to repeat). The server is then started again after an
//! exponential backoff; a server that stays up for a while earns a fresh count.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use prise_config::{RestartPolicy, Server};

use crate::event::MountEvent;
use crate::options::MountOptions;
use crate::session::dial::{self, StderrSlot};
use crate::session::handler::Handler;
use crate::session::state::Live;

/// The first restart waits this long; each next one twice as long.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// No restart waits longer than this.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A server that ran this long before exiting starts its restart count afresh.
const HEALTHY_AFTER: Duration = Duration::from_secs(60);

/// Watches `live`'s process and restarts it when it exits without being closed.
pub(crate) fn spawn(
    server: Server,
    options: MountOptions,
    client: Handler,
    live: Arc<Live>,
) -> tokio::task::AbortHandle {
    tokio::spawn(supervise(server, options, client, live)).abort_handle()
}

async fn supervise(server: Server, options: MountOptions, client: Handler, live: Arc<Live>) {
    let RestartPolicy::OnFailure { max_restarts } = server.restart else {
        return;
    };
    let events = live.shared.events.clone();
    let mut restarts = 0;
    loop {
        let connection = live.current();
        let Some(child) = &connection.child else {
            return;
        };
        let up_since = Instant::now();
        let status = child.exited().await;
        if live.closing.load(Ordering::Acquire) {
            return;
        }
        let asked = live.restart_asked.swap(false, Ordering::AcqRel);
        if up_since.elapsed() >= HEALTHY_AFTER || asked {
            restarts = 0;
        }
        let status = status.map_or_else(|| "unknown status".to_owned(), |s| s.to_string());
        if asked {
            tracing::info!(server = %server.name, "restarting, as asked");
        } else {
            tracing::warn!(server = %server.name, "exited ({status})");
        }
        loop {
            if restarts >= max_restarts {
                let error = format!(
                    "exited ({status}) and was restarted {restarts} times in a row; giving up"
                );
                let _ = events.send(MountEvent::Failed {
                    server: server.name.clone(),
                    error,
                });
                return;
            }
            restarts += 1;
            // Asked for: at once, the first attempt only.
            let delay = if asked && restarts == 1 {
                Duration::ZERO
            } else {
                backoff(restarts)
            };
            let _ = events.send(MountEvent::Restarting {
                server: server.name.clone(),
                attempt: restarts,
                delay,
            });
            tokio::time::sleep(delay).await;
            if live.closing.load(Ordering::Acquire) {
                return;
            }
            let started = Instant::now();
            let slot = StderrSlot::default();
            let attempt = dial::establish(&server, &options, client.clone(), &slot);
            match tokio::time::timeout(server.startup_timeout, attempt).await {
                Ok(Ok(connected)) => {
                    live.reconnected(connected).await;
                    let _ = events.send(MountEvent::Ready {
                        server: server.name.clone(),
                        elapsed: started.elapsed(),
                    });
                    break;
                }
                Ok(Err(failed)) => {
                    tracing::warn!(server = %server.name, "restart failed: {}", failed.cause)
                }
                Err(_) => tracing::warn!(server = %server.name, "restart timed out"),
            }
        }
    }
}

/// 0.5 s, 1 s, 2 s, ... capped at 30 s.
fn backoff(attempt: u32) -> Duration {
    FIRST_BACKOFF
        .saturating_mul(1 << attempt.saturating_sub(1).min(10))
        .min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_cap() {
        assert_eq!(backoff(1), Duration::from_millis(500));
        assert_eq!(backoff(2), Duration::from_secs(1));
        assert_eq!(backoff(4), Duration::from_secs(4));
        assert_eq!(backoff(20), Duration::from_secs(30));
    }
}
