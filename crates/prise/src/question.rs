//! Questions asked at the terminal: one at a time, and each can be called off.
//!
//! Approval prompts and servers' forms (elicitation) both write to stderr and read
//! answers from stdin, and both can arise from calls running in parallel: without a
//! turn each, two questions would interleave and race for the same typed line.
//!
//! A question waits on a thread of its own (reading a terminal blocks). When Ctrl-C
//! cancels a chat turn, the question it was asking must stop waiting too, or the next
//! line the person types would be taken as its answer. So answers are read with
//! `poll` on stdin and on a pipe that [`cancel_open`] writes to.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use rustix::event::{PollFd, PollFlags, poll};

static TERMINAL: Mutex<()> = Mutex::new(());
/// Bumped by [`cancel_open`]: questions asked before it are called off.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// Written to by [`cancel_open`], to wake questions waiting for a line.
static WAKE: OnceLock<Option<(OwnedFd, OwnedFd)>> = OnceLock::new();

fn wake_pipe() -> Option<&'static (OwnedFd, OwnedFd)> {
    WAKE.get_or_init(|| {
        rustix::pipe::pipe_with(
            rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
        )
        .ok()
    })
    .as_ref()
}

/// What a question got.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// A line, without its newline.
    Line(String),
    /// The question was called off (Ctrl-C).
    Cancelled,
    /// Input ended (Ctrl-D) or could not be read.
    Closed,
}

/// A question, from the moment it is asked (in the async part, before it waits for
/// its turn at the terminal): a cancel after that moment calls it off.
pub struct Question {
    generation: u64,
}

impl Question {
    /// A question asked now.
    pub fn new() -> Question {
        let _ = wake_pipe();
        Question {
            generation: GENERATION.load(Ordering::Acquire),
        }
    }

    fn cancelled(&self) -> bool {
        GENERATION.load(Ordering::Acquire) != self.generation
    }

    /// Waits for the terminal; `None` when the question was called off meanwhile.
    pub fn turn(&self) -> Option<MutexGuard<'static, ()>> {
        let guard = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
        (!self.cancelled()).then_some(guard)
    }

    /// Reads one line typed at the terminal.
    pub fn read_line(&self) -> Answer {
        let stdin = std::io::stdin();
        let mut line = Vec::new();
        loop {
            if self.cancelled() {
                return Answer::Cancelled;
            }
            let Some((wake, _)) = wake_pipe() else {
                return Answer::Closed;
            };
            let mut fds = [
                PollFd::new(&stdin, PollFlags::IN),
                PollFd::new(wake, PollFlags::IN),
            ];
            if poll(&mut fds, None).is_err() {
                continue; // EINTR: the signal that cancels may be what woke us.
            }
            let ready = fds[0].revents();
            // The cancel is checked before reading, so a line typed after Ctrl-C goes
            // to whoever reads next (the chat), not to this question.
            if self.cancelled() {
                return Answer::Cancelled;
            }
            if fds[1].revents().contains(PollFlags::IN) {
                // A wake-up left over from a cancel that found no question waiting.
                drain(wake);
            }
            if !ready.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR) {
                continue;
            }
            // A terminal in canonical mode hands out at most one line per read, so
            // nothing past the line is taken from whoever reads after.
            let mut buffer = [0u8; 4096];
            match rustix::io::read(stdin.as_fd(), &mut buffer) {
                Ok(0) => return Answer::Closed,
                Ok(n) => {
                    line.extend_from_slice(&buffer[..n]);
                    if line.ends_with(b"\n") {
                        line.pop();
                        if line.ends_with(b"\r") {
                            line.pop();
                        }
                        return Answer::Line(String::from_utf8_lossy(&line).into_owned());
                    }
                }
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(_) => return Answer::Closed,
            }
        }
    }
}

/// Calls off every question asked so far: the one on screen stops waiting, those
/// waiting for their turn are never shown.
pub fn cancel_open() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
    if let Some((_, write)) = wake_pipe() {
        let _ = rustix::io::write(write, b"x");
    }
}

fn drain(fd: &OwnedFd) {
    let mut buffer = [0u8; 64];
    while matches!(rustix::io::read(fd, &mut buffer), Ok(1..)) {}
}
