//! How prise fails: one message, an optional hint, and an exit code.

use std::fmt::Display;
use std::io;
use std::process::ExitCode;

use prise_config::ConfigError;

/// An error on its way to the top, where it is printed once.
#[derive(Debug)]
pub enum Failure {
    /// Bad arguments or configuration: exit code 2.
    Usage {
        /// What is wrong.
        message: String,
        /// How to fix it.
        hint: Option<String>,
    },
    /// The job itself failed (a tool error, an unreachable server): exit code 1.
    Job(anyhow::Error),
    /// stdout was closed by its reader (`prise tools | head`): end quietly.
    BrokenPipe,
    /// Ctrl-C or SIGTERM: exit 128 + the signal number, as shells expect.
    Interrupted(i32),
}

impl Failure {
    /// A usage or configuration error with a hint.
    pub fn usage(message: impl Display, hint: impl Into<Option<String>>) -> Failure {
        Failure::Usage {
            message: message.to_string(),
            hint: hint.into(),
        }
    }

    /// Prints the failure on stderr and returns its exit code.
    pub fn report(self) -> ExitCode {
        match self {
            Failure::BrokenPipe => ExitCode::SUCCESS,
            Failure::Interrupted(signal) => ExitCode::from(128 + signal as u8),
            Failure::Usage { message, hint } => {
                eprintln!("error: {message}");
                if let Some(hint) = hint {
                    eprintln!("hint: {hint}");
                }
                ExitCode::from(2)
            }
            Failure::Job(error) => {
                eprintln!("error: {error:#}");
                ExitCode::from(1)
            }
        }
    }
}

impl From<ConfigError> for Failure {
    fn from(error: ConfigError) -> Failure {
        let hint = error.hint().map(str::to_owned);
        Failure::Usage {
            message: error.to_string(),
            hint,
        }
    }
}

impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Failure {
        if error.kind() == io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::Job(error.into())
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        match error.downcast::<io::Error>() {
            Ok(io) => io.into(),
            Err(error) => Failure::Job(error),
        }
    }
}
