//! How fast the docs server indexes and searches a tree of 10,000 Markdown files.
//!
//! ```sh
//! cargo run --release -p prise-servers --example grep_10k
//! ```
//!
//! It writes the tree to a temporary folder (about 20 MB), then times the index build
//! and three searches: a word on every page (stops at 20 hits), a word on one page
//! deep in the sort order, and a word on none (scans everything).

use std::fmt::Write as _;
use std::time::Instant;

use prise_servers::Library;

fn main() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut page = String::new();
    for line in 0..40 {
        writeln!(
            page,
            "Line {line} of a page about HTTP clients, timeouts, retries and connection pools."
        )
        .unwrap();
    }
    for i in 0..10_000 {
        let folder = dir.path().join(format!("section{:03}", i / 100));
        std::fs::create_dir_all(&folder)?;
        let mut text = format!("# Page {i}\n\n{page}");
        if i == 9_876 {
            text.push_str("The needle: zeppelin.\n");
        }
        std::fs::write(folder.join(format!("page{i:05}.md")), text)?;
    }

    let started = Instant::now();
    let library = Library::load(dir.path())?;
    let load = started.elapsed();
    println!("indexed {} documents in {load:.2?}", library.docs().len());

    for keyword in ["timeouts", "zeppelin", "absent-everywhere"] {
        // The best of five, to leave out the first run's cold caches.
        let mut best = std::time::Duration::MAX;
        let mut hits = 0;
        for _ in 0..5 {
            let started = Instant::now();
            hits = library.grep(keyword).map(|h| h.len()).unwrap_or(0);
            best = best.min(started.elapsed());
        }
        println!("grep_docs({keyword:?}): {hits} hits in {best:.2?}");
    }
    Ok(())
}
