//! One module per subcommand; each takes parsed arguments and writes results to stdout.

pub mod auth;
pub mod chat;
pub mod config;
mod describe;
pub mod edit;
pub mod inspect;
pub mod models;
pub mod mounted;
mod prompt_arguments;
pub mod run;
pub mod serve;
pub mod sessions;
pub mod trust;
pub mod ui;

use clap::CommandFactory;

use crate::cli::Cli;
use crate::failure::Failure;

/// `prise completions SHELL`: prints a completion script for the shell.
pub fn completions(shell: clap_complete::Shell) -> Result<(), Failure> {
    let mut out = crate::output::stdout();
    clap_complete::generate(shell, &mut Cli::command(), "prise", &mut out);
    std::io::Write::flush(&mut out)?;
    Ok(())
}
