//! `bench-relay -- SERVER ARGS...`: the floor of a gateway. It starts the server and
//! copies lines both ways between its own stdin and stdout and the server's, parsing
//! nothing, a blocking thread each way: what one more process on the path costs on
//! this machine (two more pipe hops and the wake-ups they take), which no gateway
//! can go under.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(at) = args.iter().position(|a| a == "--") else {
        eprintln!("usage: bench-relay -- SERVER ARGS...");
        std::process::exit(2);
    };
    let Some(program) = args.get(at + 1) else {
        eprintln!("usage: bench-relay -- SERVER ARGS...");
        std::process::exit(2);
    };
    let mut server = match Command::new(program)
        .args(&args[at + 2..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(server) => server,
        Err(e) => {
            eprintln!("error: cannot start {program}: {e}");
            std::process::exit(1);
        }
    };
    let (mut to_server, from_server) = (server.stdin.take(), server.stdout.take());
    let back = std::thread::spawn(move || {
        let Some(from_server) = from_server else {
            return;
        };
        copy_lines(BufReader::new(from_server), std::io::stdout().lock());
    });
    if let Some(to_server) = to_server.as_mut() {
        copy_lines(std::io::stdin().lock(), to_server);
    }
    // The client is gone: so is the server's stdin, and the server ends.
    drop(to_server);
    let _ = server.wait();
    let _ = back.join();
}

/// Copies lines from `from` to `to`, each flushed at once, until either end closes.
fn copy_lines(mut from: impl BufRead, mut to: impl Write) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            return;
        }
    }
}
