//! Runs a command confined as a sandboxed stdio server would be by default: secrets
//! unreadable, the current folder and a private temporary folder writable, no network.
//!
//! ```sh
//! cargo run -p prise-sandbox --example confined -- cat ~/.ssh/id_ed25519   # refused
//! cargo run -p prise-sandbox --example confined -- sh -c 'echo ok > here.txt' # allowed
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use prise_sandbox::{Policy, confine};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: confined PROGRAM [ARGS...]");
        return ExitCode::from(2);
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut policy = Policy::strict(home.as_deref(), None);
    policy.allow_write.extend(std::env::current_dir().ok());
    let (mut command, confinement) = match confine(program, &policy) {
        Ok(confined) => confined,
        Err(e) => {
            eprintln!("confined: {e}");
            return ExitCode::from(2);
        }
    };
    command.args(args);
    confinement.set_env(&mut command);
    let status = command.status();
    drop(confinement);
    match status {
        Ok(status) => ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("confined: {e}");
            ExitCode::from(1)
        }
    }
}
