//! Children confined for real: what they may not read, write or reach is refused by
//! the kernel, and what they were given still works.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use prise_sandbox::{Network, Policy, confine};

/// A home folder with a key in it, and a project folder beside it.
struct Scene {
    root: tempfile::TempDir,
}

impl Scene {
    fn new() -> Scene {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("home/.ssh")).unwrap();
        std::fs::write(root.path().join("home/.ssh/id_ed25519"), "PRIVATE KEY").unwrap();
        std::fs::write(root.path().join("home/notes.txt"), "notes").unwrap();
        std::fs::create_dir_all(root.path().join("project")).unwrap();
        Scene { root }
    }
    fn home(&self) -> std::path::PathBuf {
        self.root.path().join("home")
    }
    fn project(&self) -> std::path::PathBuf {
        self.root.path().join("project")
    }
    fn policy(&self) -> Policy {
        let mut policy = Policy::strict(Some(&self.home()), None);
        policy.allow_write.push(self.project());
        policy
    }
}

fn sh(script: &str, policy: Option<&Policy>) -> Output {
    let (mut command, kept) = match policy {
        Some(policy) => {
            let (command, confinement) = confine("sh", policy).unwrap();
            (command, Some(confinement))
        }
        None => (Command::new("sh"), None),
    };
    command.arg("-c").arg(script);
    if let Some(confinement) = &kept {
        confinement.set_env(&mut command);
    }
    command.output().unwrap()
}

fn ok(output: &Output) -> bool {
    output.status.success()
}

#[test]
fn keys_are_unreadable_and_the_rest_of_home_is_readable() {
    let scene = Scene::new();
    let key = scene.home().join(".ssh/id_ed25519");
    let read_key = format!("cat {}", key.display());
    assert!(
        ok(&sh(&read_key, None)),
        "without a sandbox the key is readable"
    );
    let refused = sh(&read_key, Some(&scene.policy()));
    assert!(!ok(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("Permission denied"),
        "{refused:?}"
    );
    let notes = sh(
        &format!("cat {}", scene.home().join("notes.txt").display()),
        Some(&scene.policy()),
    );
    assert_eq!(String::from_utf8_lossy(&notes.stdout), "notes");
}

#[test]
fn a_link_to_a_hidden_folder_does_not_open_it() {
    let scene = Scene::new();
    std::os::unix::fs::symlink(scene.home().join(".ssh"), scene.home().join("keys")).unwrap();
    let read = format!("cat {}/keys/id_ed25519", scene.home().display());
    assert!(ok(&sh(&read, None)));
    assert!(!ok(&sh(&read, Some(&scene.policy()))));
}

#[test]
fn writes_land_only_in_given_folders_and_the_private_temp() {
    let scene = Scene::new();
    let outside = scene.home().join("planted");
    let write = format!(
        "echo x > {}/made && echo y > \"$TMPDIR/scratch\" && echo z > {}",
        scene.project().display(),
        outside.display()
    );
    let output = sh(&write, Some(&scene.policy()));
    assert!(!ok(&output));
    assert!(
        scene.project().join("made").exists(),
        "the given folder is writable: {output:?}"
    );
    assert!(!outside.exists(), "nothing may be written outside it");
    assert!(ok(&sh(&format!("echo z > {}", outside.display()), None)));
}

#[test]
fn the_network_is_refused_unless_allowed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let connect = format!(
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5)'"
    );
    let scene = Scene::new();
    let refused = sh(&connect, Some(&scene.policy()));
    assert!(!ok(&refused), "{refused:?}");
    let mut allowed = scene.policy();
    allowed.network = Network::Ports(vec![port]);
    assert!(ok(&sh(&connect, Some(&allowed))));
    allowed.network = Network::Allowed;
    assert!(ok(&sh(&connect, Some(&allowed))));
    let mut accepted = 0;
    while listener.accept().is_ok() {
        accepted += 1;
    }
    assert_eq!(accepted, 2, "only the allowed attempts arrived");
}

#[test]
fn unix_sockets_by_path_are_refused_unless_allowed() {
    let scene = Scene::new();
    let path = scene.project().join("daemon.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let connect = format!(
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\")'",
        path.display()
    );
    assert!(!ok(&sh(&connect, Some(&scene.policy()))));
    let mut allowed = scene.policy();
    allowed.unix_sockets = true;
    assert!(ok(&sh(&connect, Some(&allowed))));
}

#[test]
fn the_private_temp_goes_when_the_confinement_is_dropped() {
    let scene = Scene::new();
    let (mut command, confinement) = confine("sh", &scene.policy()).unwrap();
    command.arg("-c").arg("echo $TMPDIR");
    confinement.set_env(&mut command);
    let mut out = String::new();
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child.wait().unwrap();
    assert_eq!(Path::new(out.trim()), confinement.temp_dir());
    let temp = confinement.temp_dir().to_owned();
    assert!(temp.is_dir());
    drop(confinement);
    assert!(!temp.exists());
}
