//! The crate's modules are layers, and each file imports only from its own layer and
//! those beneath it (the order in `lib.rs`'s doc). A file that reaches up fails this
//! test with the file, the line and the module it reached for.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The layers, from the bottom; a module's layer is that of its first segment.
const LAYERS: &[&[&str]] = &[
    &[
        "catalog", "elicit", "eras", "error", "event", "options", "person", "progress", "registry",
        "roots", "sampling", "template",
    ],
    &["net"],
    &["auth", "accounts"],
    &["transport"],
    &["session"],
    &["call"],
    &["mount", "supervise"],
    &["mounts", "plan", "status"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// What the crate root re-exports, by name: `pub use module::{A, B}` makes
/// `crate::A` a reference to `module`.
fn reexports(lib: &str) -> HashMap<String, String> {
    let mut names = HashMap::new();
    let text = lib.replace('\n', " ");
    for statement in text.split(';') {
        let Some(used) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = used.split("::").next().unwrap().trim().to_owned();
        let (_, last) = used.split_once("::").unwrap_or(("", used));
        let listed = last.trim().trim_start_matches('{').trim_end_matches('}');
        for name in listed.split(',') {
            let name = name.trim().rsplit("::").next().unwrap().trim();
            if !name.is_empty() {
                names.insert(name.to_owned(), module.clone());
            }
        }
    }
    names
}

/// The modules a line of code names through `crate::`, by their first segment
/// (with `crate::{a, b}` read as both).
fn named(line: &str, reexported: &HashMap<String, String>) -> Vec<String> {
    let mut modules = Vec::new();
    for (at, _) in line.match_indices("crate::") {
        let rest = &line[at + "crate::".len()..];
        let first: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            group.split(',').collect()
        } else {
            vec![rest]
        };
        for path in first {
            let segment: String = path
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if segment.is_empty() {
                continue;
            }
            let module = reexported.get(&segment).cloned().unwrap_or(segment);
            modules.push(module);
        }
    }
    modules
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let reexported = reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    let mut unplaced = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let module = first.to_string_lossy().trim_end_matches(".rs").to_owned();
        if module == "lib" {
            continue;
        }
        let Some(own) = layer_of(&module) else {
            unplaced.push(module);
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for reached in named(line, &reexported) {
                match layer_of(&reached) {
                    Some(layer) if layer > own => wrong.push(format!(
                        "{}:{}: {module} (layer {own}) imports {reached} (layer {layer})",
                        relative.display(),
                        number + 1
                    )),
                    None if reached != "model" => unplaced.push(reached),
                    _ => {}
                }
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "modules in no layer (add them to LAYERS): {unplaced:?}"
    );
    assert!(
        wrong.is_empty(),
        "imports from above:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reading_of_imports_is_right() {
    let reexported = reexports("pub use mount::{InProcessStream, Mount};\npub use call::tasks;");
    assert_eq!(
        named("use crate::{session::dial, Mount, tasks::x};", &reexported),
        ["session", "mount", "call"]
    );
    assert_eq!(
        named("let x = crate::net::for_server();", &reexported),
        ["net"]
    );
    assert_eq!(named("no paths here", &reexported), Vec::<String>::new());
}
