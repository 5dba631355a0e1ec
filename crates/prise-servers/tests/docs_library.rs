//! The documentation tools' behaviour on a tree made here, and the sandbox.

use std::fs;
use std::path::Path;

use prise_servers::docs::{DocError, Library, MAX_FILE_BYTES, Refusal};

/// A small documentation tree in a temporary folder.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("guide/deep")).unwrap();
    fs::create_dir_all(root.join(".git")).unwrap();
    fs::write(
        root.join("index.md"),
        "# Welcome\n\nUse `Client(timeout=5)` to set a TIMEOUT.\nNothing here.\n",
    )
    .unwrap();
    fs::write(
        root.join("guide/setup.md"),
        "Intro line\n## Setting up\n   timeout: indented and trimmed   \nlast\n",
    )
    .unwrap();
    fs::write(
        root.join("guide/deep/long.md"),
        (1..=200).map(|i| format!("line {i}\n")).collect::<String>(),
    )
    .unwrap();
    fs::write(
        root.join("notes.txt"),
        "timeout in a text file is not a doc\n",
    )
    .unwrap();
    fs::write(root.join(".git/HEAD.md"), "timeout hidden\n").unwrap();
    dir
}

#[test]
fn grep_format_order_and_case() {
    let dir = tree();
    let lib = Library::load(dir.path()).unwrap();
    let hits = lib.grep("timeout").unwrap();
    assert_eq!(
        hits,
        [
            "guide/setup.md:3: timeout: indented and trimmed",
            "index.md:3: Use `Client(timeout=5)` to set a TIMEOUT.",
        ]
    );
    assert!(lib.grep("no-such-word").unwrap().is_empty());
    assert_eq!(lib.grep(""), Err(DocError::EmptyKeyword));
    // Regex metacharacters are literal.
    assert_eq!(lib.grep("(timeout=5)").unwrap().len(), 1);
    assert!(lib.grep("t.meout").unwrap().is_empty());
}

#[test]
fn grep_caps_hits_and_line_length() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("match {}\n", "x".repeat(300));
    fs::write(dir.path().join("a.md"), long.repeat(30)).unwrap();
    let lib = Library::load(dir.path()).unwrap();
    let hits = lib.grep("MATCH").unwrap();
    assert_eq!(hits.len(), 20);
    assert_eq!(hits[0], format!("a.md:1: match {}", "x".repeat(94)));
    assert_eq!(hits[19].split(':').nth(1), Some("20"));
    // The cut counts characters, not bytes.
    fs::write(dir.path().join("a.md"), format!("é{}\n", "é".repeat(150))).unwrap();
    let hit = &Library::load(dir.path()).unwrap().grep("é").unwrap()[0];
    assert_eq!(hit.strip_prefix("a.md:1: ").unwrap().chars().count(), 100);
}

#[test]
fn read_ranges_and_clamping() {
    let dir = tree();
    let lib = Library::load(dir.path()).unwrap();
    assert_eq!(
        lib.read("guide/deep/long.md", 3, 5).unwrap(),
        "3: line 3\n4: line 4\n5: line 5"
    );
    let first = lib.read("guide/deep/long.md", 1, 80).unwrap();
    assert_eq!(first.lines().count(), 80);
    // At most 80 lines, even when asked for more.
    let capped = lib.read("guide/deep/long.md", 10, 500).unwrap();
    assert_eq!(capped.lines().count(), 80);
    assert!(capped.ends_with("89: line 89"));
    // Clamped to the file's length.
    assert_eq!(
        lib.read("guide/deep/long.md", 199, 300).unwrap(),
        "199: line 199\n200: line 200"
    );
    assert_eq!(lib.read("index.md", 1, 1).unwrap(), "1: # Welcome");
    for (start, end, expected) in [
        (0, 5, "start must be 1"),
        (5, 4, "end (4) is before start (5)"),
        (201, 210, "past the end"),
    ] {
        match lib.read("guide/deep/long.md", start, end) {
            Err(DocError::BadRange(why)) => assert!(why.contains(expected), "{why}"),
            other => panic!("{start}..{end}: {other:?}"),
        }
    }
}

#[test]
fn list_titles_and_what_is_indexed() {
    let dir = tree();
    let lib = Library::load(dir.path()).unwrap();
    let listed: Vec<(&str, Option<&str>)> = lib
        .docs()
        .iter()
        .map(|d| (d.path.as_str(), d.title.as_deref()))
        .collect();
    assert_eq!(
        listed,
        [
            ("guide/deep/long.md", None),
            ("guide/setup.md", Some("Setting up")),
            ("index.md", Some("Welcome"))
        ]
    );
}

#[cfg(unix)]
#[test]
fn sandbox_refuses_every_way_out() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.md"), "TOP-SECRET\n").unwrap();
    let dir = tree();
    let root = dir.path();
    symlink(outside.path().join("secret.md"), root.join("escape.md")).unwrap();
    symlink(outside.path(), root.join("linked-dir")).unwrap();
    symlink("/dev/zero", root.join("zero.md")).unwrap();
    symlink(root.join("index.md"), root.join("alias.md")).unwrap();
    fs::write(root.join("latin1.md"), b"caf\xe9\n").unwrap();
    let big = fs::File::create(root.join("big.md")).unwrap();
    big.set_len(MAX_FILE_BYTES + 1).unwrap();

    let lib = Library::load(root).unwrap();
    assert_eq!(
        lib.get("escape.md").unwrap_err(),
        DocError::Refused("escape.md".into(), Refusal::OutsideRoot)
    );
    assert_eq!(
        lib.get("zero.md").unwrap_err(),
        DocError::Refused("zero.md".into(), Refusal::OutsideRoot)
    );
    assert_eq!(
        lib.get("latin1.md").unwrap_err(),
        DocError::Refused("latin1.md".into(), Refusal::NotUtf8)
    );
    assert_eq!(
        lib.get("big.md").unwrap_err(),
        DocError::Refused("big.md".into(), Refusal::TooLarge)
    );
    assert!(matches!(
        lib.get("linked-dir/secret.md"),
        Err(DocError::NotFound(_))
    ));
    // A symlink that stays inside is a document like any other.
    assert_eq!(lib.read("alias.md", 1, 1).unwrap(), "1: # Welcome");
    assert!(lib.grep("TOP-SECRET").unwrap().is_empty());

    let secret = outside.path().join("secret.md");
    let up = format!(
        "../{}/secret.md",
        outside.path().file_name().unwrap().to_str().unwrap()
    );
    for path in [
        secret.to_str().unwrap(),
        up.as_str(),
        "guide/../../etc/passwd",
        "index.md\0.txt",
        "%2e%2e/%2e%2e/etc/passwd",
        "..%2fsecret.md",
        "\u{FF0E}\u{FF0E}/secret.md",
        "guide\u{2215}setup.md",
        "..\\secret.md",
        "/etc/passwd",
        "",
    ] {
        assert!(
            matches!(lib.get(path), Err(DocError::BadPath(_))),
            "{path:?} gave {:?}",
            lib.get(path).map(|d| &d.path)
        );
    }
}

/// Generated paths built from traversal fragments: whatever the mix, a read either
/// fails or returns a document whose real file is under the root.
#[cfg(unix)]
#[test]
fn generated_paths_never_leave_the_root() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.md"), "TOP-SECRET\n").unwrap();
    let dir = tree();
    let root = dir.path();
    symlink(outside.path().join("secret.md"), root.join("escape.md")).unwrap();
    symlink(outside.path(), root.join("linked")).unwrap();
    let lib = Library::load(root).unwrap();
    let real_root = root.canonicalize().unwrap();

    let outside_name = outside
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let fragments: Vec<String> = [
        "..",
        ".",
        "",
        "/",
        "\\",
        "%2e",
        "%2f",
        "%00",
        "\0",
        "\u{FF0E}",
        "\u{2215}",
        "\u{2024}",
        "guide",
        "deep",
        "index.md",
        "setup.md",
        "long.md",
        "secret.md",
        "escape.md",
        "linked",
        "etc",
        "passwd",
        "~",
        "C:",
        "//",
        "..%c0%af",
        "\u{200B}",
        "é",
        "md",
        "*",
        "?",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([outside_name])
    .collect();

    // xorshift: deterministic, so a failure reproduces.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut served = 0;
    for _ in 0..20_000 {
        let parts = 1 + next() % 6;
        let mut path = String::new();
        for i in 0..parts {
            if i > 0 && next() % 4 != 0 {
                path.push('/');
            }
            path.push_str(&fragments[(next() % fragments.len() as u64) as usize]);
        }
        if let Ok(doc) = lib.get(&path) {
            served += 1;
            assert!(!doc.text.contains("TOP-SECRET"), "{path:?}");
            let real = real_root.join(&doc.path).canonicalize().unwrap();
            assert!(
                real.starts_with(&real_root),
                "{path:?} -> {}",
                real.display()
            );
        }
        if let Ok(text) = lib.read(&path, 1, 80) {
            assert!(!text.contains("TOP-SECRET"), "{path:?}");
        }
    }
    // The generator does reach real documents, so the assertions above ran.
    assert!(served > 0);
}

#[test]
fn a_missing_root_is_an_error() {
    assert!(Library::load(Path::new("/no/such/folder")).is_err());
}
