//! The person's part of a sign-in at a terminal: the address on stderr, a browser
//! opened on it, and, for `prise auth login`, a line to paste the address the browser
//! ended on when it runs on another machine than prise (over SSH, the browser cannot
//! reach prise's 127.0.0.1 listener).

use std::io::IsTerminal;
use std::sync::Arc;

use prise_mcp::auth::{BoxFuture, Loopback, Show};

use crate::question::{self, Question};

/// Sends the person to their browser from a terminal.
#[derive(Debug, Clone, Copy)]
pub struct Terminal {
    /// Open a browser on the address (else only print it).
    pub open_browser: bool,
    /// Offer to paste the address the browser ended on.
    pub paste: bool,
}

/// The sign-in of a command that mounts servers: in a terminal, a server that asks
/// is signed in to there and then, in the browser; elsewhere nobody can, and the
/// server's error says to run `prise auth login`.
pub fn while_mounting() -> Option<Arc<dyn prise_mcp::auth::SignIn>> {
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    terminal.then(|| {
        Arc::new(Loopback::new(Arc::new(Terminal {
            open_browser: true,
            paste: false,
        }))) as Arc<dyn prise_mcp::auth::SignIn>
    })
}

impl Show for Terminal {
    fn show_code(&self, server: &str, code: &prise_mcp::auth::device::DeviceCode) {
        eprintln!(
            "{server} needs you to sign in: on any device, open\n  {}\nand enter the code {} (it lasts {} min)",
            code.verification_uri,
            code.user_code,
            code.expires_in.as_secs().div_ceil(60)
        );
        if let Some(complete) = &code.verification_uri_complete {
            eprintln!("or open this address, which has the code in it:\n  {complete}");
        }
        eprintln!("Waiting for the code to be entered…");
    }

    fn show(&self, server: &str, url: &str) -> BoxFuture<'static, Option<String>> {
        let opened = self.open_browser && crate::browser::open(url);
        if opened {
            eprintln!("{server} needs you to sign in: your browser is opening at\n  {url}");
        } else {
            eprintln!("{server} needs you to sign in: open this address in a browser\n  {url}");
        }
        if !self.paste || !std::io::stdin().is_terminal() {
            return Box::pin(std::future::pending());
        }
        eprintln!(
            "If that browser runs on another machine, paste here the address it ends on (it starts with http://127.0.0.1):"
        );
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let asked = Question::new();
        std::thread::spawn(move || {
            let _turn = asked.turn();
            loop {
                match asked.read_line() {
                    question::Answer::Line(line) if line.trim().starts_with("http") => {
                        let _ = sender.send(line);
                        return;
                    }
                    question::Answer::Line(line) if line.trim().is_empty() => {}
                    question::Answer::Line(_) => eprintln!(
                        "that is not an address: paste the whole of it, from the browser's address bar"
                    ),
                    question::Answer::Cancelled | question::Answer::Closed => return,
                }
            }
        });
        Box::pin(async move {
            // When the browser comes back by itself, the question is called off.
            let _call_off = CallOff;
            receiver.await.ok()
        })
    }
}

/// Calls off the paste question when the sign-in no longer waits for it.
struct CallOff;

impl Drop for CallOff {
    fn drop(&mut self) {
        question::cancel_open();
    }
}
