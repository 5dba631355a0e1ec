//! Long calls in a terminal: a server's progress notifications as a bar (a spinner
//! with its message when it gives no total), and how long a call took.
//!
//! Only on a terminal: a pipe or a log gets nothing of it.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use prise_mcp::MountEvent;
use tokio::sync::broadcast;

use crate::output::revealed;

/// A call that runs longer than this gets a spinner, and its time said at the end.
pub const LONG: Duration = Duration::from_secs(1);

/// Progress bars are drawn in hundredths of the server's units: totals may be 1.0.
const SCALE: f64 = 100.0;

/// What stands on the terminal's last line while calls run.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Progress on stderr, or `None` when stderr is not a terminal.
    pub fn for_terminal() -> Option<Progress> {
        std::io::stderr()
            .is_terminal()
            .then_some(Progress { bar: None })
    }

    /// Shows a spinner and the time so far: the call of `label` is taking long.
    pub fn waiting(&mut self, label: &str) {
        let label = revealed(label).into_owned();
        self.bar().set_message(label);
    }

    /// Shows a progress notification about `label` (a tool, or a server).
    pub fn update(
        &mut self,
        label: &str,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) {
        let label = revealed(label);
        let text = match message {
            Some(message) => format!("{label}: {}", revealed(message)),
            None => label.into_owned(),
        };
        let bar = self.bar();
        match total.filter(|t| t.is_finite() && *t > 0.0) {
            Some(total) => {
                bar.set_style(
                    ProgressStyle::with_template("{bar:30} {percent:>3}% {msg} ({elapsed})")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                bar.set_length((total * SCALE) as u64);
                bar.set_position((progress.clamp(0.0, total) * SCALE) as u64);
            }
            None => bar.set_style(spinner()),
        }
        bar.set_message(text);
    }

    /// Shows the status of the task a server made of the call of `label`.
    pub fn status(&mut self, label: &str, status: &str) {
        let text = format!("{}: {}", revealed(label), revealed(status));
        let bar = self.bar();
        bar.set_style(spinner());
        bar.set_message(text);
    }

    /// Takes the bar away, leaving a clean line.
    pub fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    fn bar(&mut self) -> &ProgressBar {
        self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(spinner());
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        })
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

fn spinner() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// Runs `work` (a request to `server`) showing the server's progress, a spinner once
/// it runs long, and afterwards how long it took.
pub async fn watch<T>(
    mut events: broadcast::Receiver<MountEvent>,
    server: &str,
    label: &str,
    work: impl Future<Output = T>,
) -> T {
    let Some(mut progress) = Progress::for_terminal() else {
        return work.await;
    };
    let started = Instant::now();
    let long = tokio::time::sleep(LONG);
    tokio::pin!(work, long);
    let mut waiting = false;
    let result = loop {
        tokio::select! {
            result = &mut work => break result,
            () = &mut long, if !waiting => {
                waiting = true;
                progress.waiting(label);
            }
            event = events.recv() => match event {
                Ok(MountEvent::Progress { server: from, progress: done, total, message, .. }) if from == server => {
                    progress.update(label, done, total, message.as_deref());
                }
                Ok(MountEvent::Task { server: from, status, message, .. }) if from == server => {
                    waiting = true;
                    let word = prise_mcp::task_status_word(status);
                    progress.status(label, message.as_deref().unwrap_or(word));
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break work.await,
            },
        }
    };
    progress.clear();
    let elapsed = started.elapsed();
    if elapsed >= LONG {
        eprintln!("({} took {:.1} s)", revealed(label), elapsed.as_secs_f64());
    }
    result
}
