//! `prise`: the command line of the prise MCP host.
//!
//! This binary is thin on purpose: it parses arguments, loads the configuration,
//! hands the work to the library crates, renders their results and errors for a
//! terminal or a script, and chooses the exit code.

mod approver;
mod browser;
mod cli;
mod commands;
mod elicitor;
mod failure;
mod markdown;
mod output;
mod progress;
mod question;
mod sign_in;
mod signals;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{AuthCommand, Cli, Command, ServeCommand};
use crate::commands::mounted::Servers;
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
    // A panic must not leave server processes behind: they run in their own process
    // groups, out of reach of the terminal's signals.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        prise_mcp::kill_all_children();
        default_hook(info);
    }));
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

/// Dispatches one subcommand; those that talk to servers run on a tokio runtime that
/// ends every server process however the command ends.
fn run(cli: Cli) -> Result<(), Failure> {
    let servers = || Servers::load(&cli.servers);
    match cli.command {
        Command::Config(args) => commands::config::run(&cli.servers, args.json),
        Command::Completions { shell } => commands::completions(shell),
        Command::Sessions(args) => commands::sessions::list(args.json),
        Command::Auth(AuthCommand::Status(args)) => commands::auth::status(servers()?, args),
        Command::Add(args) => commands::edit::add(&cli.servers, args),
        Command::Remove(args) => commands::edit::remove(&cli.servers, args),
        Command::Import(args) => commands::edit::import(&cli.servers, args),
        // Chat handles Ctrl-C itself: it cancels the turn, not the program.
        Command::Chat(args) => runtime()?.block_on(commands::chat::run(servers()?, args)),
        Command::Serve(ServeCommand::Docs(args)) => {
            runtime()?.block_on(signals::until_signal(commands::serve::docs(args)))
        }
        command => {
            let servers = servers()?;
            runtime()?.block_on(signals::until_signal(async {
                match command {
                    Command::Servers(args) => commands::inspect::servers(servers, args.json).await,
                    Command::Tools(args) => commands::inspect::tools(servers, args).await,
                    Command::Scan(args) => commands::trust::scan(servers, args).await,
                    Command::Trust(args) => commands::trust::trust(servers, args).await,
                    Command::Call(args) => commands::inspect::call(servers, args).await,
                    Command::Resources(args) => commands::inspect::resources(servers, args).await,
                    Command::Read(args) => commands::inspect::read(servers, args).await,
                    Command::Prompts(args) => commands::inspect::prompts(servers, args).await,
                    Command::Prompt(args) => commands::inspect::prompt(servers, args).await,
                    Command::Run(args) => commands::run::run(servers, args).await,
                    Command::Ui(args) => commands::ui::run(servers, args).await,
                    Command::Serve(ServeCommand::Gateway(args)) => {
                        commands::serve::gateway(servers, args).await
                    }
                    Command::Models(args) => commands::models::list(servers.config, args).await,
                    Command::Auth(AuthCommand::Login(args)) => {
                        commands::auth::login(servers, args).await
                    }
                    Command::Auth(AuthCommand::Logout(args)) => {
                        commands::auth::logout(servers, args).await
                    }
                    _ => unreachable!("handled above"),
                }
            }))
        }
    }
}

/// One thread: a host waits on servers and models, it does not compute, and handing a
/// reply from one worker thread to another cost about 30 µs per tool call, half of a
/// whole round trip (measured in docs/BENCHMARKS.md).
fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Job(anyhow::anyhow!("cannot start the async runtime: {e}")))
}

/// Sends `tracing` logs to stderr: warnings by default, more with `-v`, or whatever
/// `RUST_LOG` says.
fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        // rmcp logs transport failures itself; prise reports them once, in its own words.
        0 => "warn,rmcp=off",
        1 => {
            "warn,prise=debug,prise_config=debug,prise_mcp=debug,prise_agent=debug,prise_llm=debug,prise_servers=debug"
        }
        _ => "trace",
    };
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::new(spec),
        _ => EnvFilter::new(default),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(verbose > 0);
    // Timestamps help when debugging; in a plain run a warning is a line for a person.
    if verbose > 0 {
        builder.init()
    } else {
        builder.without_time().init()
    }
}
