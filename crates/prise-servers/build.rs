//! Embeds prise's own documentation (the repository's `docs/` folder and README) so
//! that `prise serve docs` with no folder, and the default mount, work anywhere.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let repo = manifest.join("../..");
    let mut files = Vec::new();
    let docs = repo.join("docs");
    println!("cargo:rerun-if-changed={}", docs.display());
    collect(&docs, &docs, &mut files);
    let readme = repo.join("README.md");
    if readme.is_file() {
        println!("cargo:rerun-if-changed={}", readme.display());
        files.push(("README.md".to_owned(), readme));
    }
    files.sort();
    let mut out = String::from(
        "/// prise's documentation: (path, text) pairs.\npub static EMBEDDED_DOCS: &[(&str, &str)] = &[\n",
    );
    for (rel, path) in &files {
        let path = path.canonicalize().expect("listed files exist");
        writeln!(
            out,
            "    ({rel:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("embedded_docs.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        println!("cargo:rerun-if-changed={}", path.display());
        if path.is_dir() {
            collect(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "md") {
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            files.push((rel, path));
        }
    }
}
