//! Running prise in a pseudo-terminal, for what only happens when a person is there:
//! line editing, Markdown rendering, the approval prompt.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long to wait for expected output before failing with what was seen: a guard
/// against hangs, far above what any step takes.
const PATIENCE: Duration = Duration::from_secs(30);

/// A process whose stdin, stdout and stderr are one terminal.
pub struct Pty {
    master: std::fs::File,
    child: Child,
    output: Arc<Mutex<Vec<u8>>>,
    /// Output before this offset has been matched already.
    seen: usize,
}

impl Pty {
    /// Starts `command` on a fresh terminal of 100×40.
    pub fn spawn(mut command: Command) -> Pty {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap();
        let size = rustix::termios::Winsize {
            ws_row: 40,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        rustix::termios::tcsetwinsize(&slave, size).unwrap();
        // Not a controlling terminal (that takes unsafe code between fork and exec):
        // prise reads its answers from stdin, which is enough here.
        command
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave);
        let child = command.spawn().unwrap();
        // The child holds the slave side now; ours must close, or reads never end.
        drop(command);
        let master = std::fs::File::from(master);
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            // EIO when the last process holding the terminal exits.
            while let Ok(n @ 1..) = reader.read(&mut buffer) {
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        Pty {
            master,
            child,
            output,
            seen: 0,
        }
    }

    /// Waits until `needle` appears after what earlier calls matched; returns the
    /// output from there to the end of the match.
    pub fn expect(&mut self, needle: &str) -> String {
        let started = Instant::now();
        loop {
            let output = String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned();
            if let Some(i) = output[self.seen.min(output.len())..].find(needle) {
                let from = self.seen;
                self.seen += i + needle.len();
                return output[from..self.seen].to_owned();
            }
            assert!(
                started.elapsed() < PATIENCE,
                "waited for {needle:?}; the terminal shows:\n{output}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `text`.
    pub fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Everything the terminal showed.
    pub fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Waits for the process to exit.
    pub fn wait(&mut self) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if started.elapsed() > PATIENCE {
                let _ = self.child.kill();
                panic!("prise did not exit; the terminal shows:\n{}", self.output());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
