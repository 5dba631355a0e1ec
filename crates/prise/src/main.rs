//! `prise`: the command line of the prise MCP host.
//!
//! This binary is thin on purpose: it parses arguments, loads the configuration,
//! hands the work to the library crates, renders their results and errors for a
//! terminal or a script, and chooses the exit code.

mod cli;
mod commands;
mod failure;
mod output;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::failure::Failure;

/// Runs prise and turns the outcome into an exit code: 0 success, 1 the job failed,
/// 2 usage or configuration error. Errors are printed here and nowhere else.
fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // clap prints help and version on stdout (exit 0) and usage errors on stderr (exit 2).
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    init_logging(cli.verbose);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

/// Dispatches one subcommand.
fn run(cli: Cli) -> Result<(), Failure> {
    let config = cli.config.as_deref();
    match cli.command {
        Command::Config(args) => commands::config::run(config, args.json),
        Command::Completions { shell } => commands::completions(shell),
        Command::Servers(_) => Err(Failure::not_yet("servers")),
        Command::Tools(_) => Err(Failure::not_yet("tools")),
        Command::Call(_) => Err(Failure::not_yet("call")),
        Command::Resources(_) => Err(Failure::not_yet("resources")),
        Command::Read(_) => Err(Failure::not_yet("read")),
        Command::Prompts(_) => Err(Failure::not_yet("prompts")),
        Command::Prompt(_) => Err(Failure::not_yet("prompt")),
        Command::Run(_) => Err(Failure::not_yet("run")),
        Command::Chat => Err(Failure::not_yet("chat")),
        Command::Serve(_) => Err(Failure::not_yet("serve")),
    }
}

/// Sends `tracing` logs to stderr: warnings by default, more with `-v`, or whatever
/// `RUST_LOG` says.
fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => {
            "warn,prise=debug,prise_config=debug,prise_mcp=debug,prise_agent=debug,prise_llm=debug,prise_servers=debug"
        }
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(verbose > 0)
        .init();
}
