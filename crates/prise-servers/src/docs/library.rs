//! The documents a docs server can show: loaded once, searched in memory.
//!
//! Everything a tool returns comes from this index, and a file enters the index only
//! after its real path (symlinks followed) is checked to be under the root. So no
//! request, however its path is spelled, can read outside the root: at worst it names
//! a document that is not in the index.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use regex::RegexBuilder;

/// Files larger than this are refused: documentation pages are small, and a huge file
/// is more likely a mistake (a log, a dump) than a page.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// At most this many hits per search, as in the reference `grep_docs`.
pub const MAX_HITS: usize = 20;
/// Each hit's line is cut at this many characters.
pub const MAX_HIT_CHARS: usize = 100;
/// At most this many lines per `read_doc` call.
pub const MAX_READ_LINES: usize = 80;

/// One Markdown document.
#[derive(Debug, Clone)]
pub struct Doc {
    /// Path relative to the root, with `/` separators.
    pub path: String,
    /// Its first heading, if it has one.
    pub title: Option<String>,
    /// Its text.
    pub text: String,
}

/// Why a document cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocError {
    /// The requested path is not a plain relative path.
    BadPath(String),
    /// No document has this path.
    NotFound(String),
    /// The file exists under the root but was left out of the index.
    Refused(String, Refusal),
    /// The line range makes no sense for this document.
    BadRange(String),
    /// The search keyword is empty.
    EmptyKeyword,
}

/// Why a file under the root was left out of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Larger than [`MAX_FILE_BYTES`].
    TooLarge,
    /// Not valid UTF-8.
    NotUtf8,
    /// A symlink whose target is outside the root.
    OutsideRoot,
    /// Not a regular file (a device, a fifo, a socket).
    NotRegular,
}

impl fmt::Display for DocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocError::BadPath(why) => write!(f, "{why}"),
            DocError::NotFound(path) => write!(
                f,
                "no document named {path}; list_docs shows the documents there are"
            ),
            DocError::Refused(path, why) => match why {
                Refusal::TooLarge => write!(
                    f,
                    "{path} is larger than {} MiB and is not served",
                    MAX_FILE_BYTES >> 20
                ),
                Refusal::NotUtf8 => write!(f, "{path} is not UTF-8 text and is not served"),
                Refusal::OutsideRoot => write!(
                    f,
                    "{path} points outside the documentation folder and is not served"
                ),
                Refusal::NotRegular => write!(f, "{path} is not a regular file and is not served"),
            },
            DocError::BadRange(why) => write!(f, "{why}"),
            DocError::EmptyKeyword => write!(f, "keyword must not be empty"),
        }
    }
}

impl std::error::Error for DocError {}

/// An indexed documentation tree.
#[derive(Debug, Default)]
pub struct Library {
    /// Documents by path, in Python's `sorted(Path)` order (component by component).
    docs: Vec<Doc>,
    by_path: BTreeMap<String, usize>,
    refused: BTreeMap<String, Refusal>,
}

impl Library {
    /// Indexes every `*.md` file under `root`, skipping hidden files and folders.
    pub fn load(root: &Path) -> std::io::Result<Library> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a folder", root.display()),
            ));
        }
        let mut docs = Vec::new();
        let mut refused = BTreeMap::new();
        // Directory symlinks are not followed: one pointing at `/` would walk the disk.
        let walk = walkdir::WalkDir::new(&root)
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
        for entry in walk {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    tracing::warn!("skipping unreadable entry: {e}");
                    continue;
                }
            };
            let is_md = entry.path().extension().is_some_and(|ext| ext == "md");
            if entry.file_type().is_dir() || !is_md {
                continue;
            }
            let Some(rel) = relative(&root, entry.path()) else {
                continue;
            };
            match read_inside(&root, entry.path()) {
                Ok(text) => docs.push(Doc {
                    title: first_heading(&text),
                    path: rel,
                    text,
                }),
                Err(why) => {
                    tracing::warn!("not serving {rel}: {}", DocError::Refused(rel.clone(), why));
                    refused.insert(rel, why);
                }
            }
        }
        Ok(Library::from_docs(docs, refused))
    }

    /// A library of documents held in memory, such as those embedded in the binary.
    pub fn from_memory(files: &[(&str, &str)]) -> Library {
        let docs = files
            .iter()
            .map(|(path, text)| Doc {
                path: (*path).to_owned(),
                title: first_heading(text),
                text: (*text).to_owned(),
            })
            .collect();
        Library::from_docs(docs, BTreeMap::new())
    }

    fn from_docs(mut docs: Vec<Doc>, refused: BTreeMap<String, Refusal>) -> Library {
        docs.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
        let by_path = docs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.path.clone(), i))
            .collect();
        Library {
            docs,
            by_path,
            refused,
        }
    }

    /// Every document, in path order.
    pub fn docs(&self) -> &[Doc] {
        &self.docs
    }

    /// The document at a path as a client wrote it.
    pub fn get(&self, requested: &str) -> Result<&Doc, DocError> {
        let path = check_path(requested)?;
        if let Some(&i) = self.by_path.get(path) {
            return Ok(&self.docs[i]);
        }
        match self.refused.get(path) {
            Some(&why) => Err(DocError::Refused(path.to_owned(), why)),
            None => Err(DocError::NotFound(path.to_owned())),
        }
    }

    /// Case-insensitive search: `path:LINE: text` for each matching line, in path order,
    /// at most [`MAX_HITS`].
    pub fn grep(&self, keyword: &str) -> Result<Vec<String>, DocError> {
        if keyword.is_empty() {
            return Err(DocError::EmptyKeyword);
        }
        // A literal, case-insensitive regex finds matches with a SIMD prefilter instead of
        // lowercasing every line of every document on every search.
        let pattern = RegexBuilder::new(&regex::escape(keyword))
            .case_insensitive(true)
            .build()
            .map_err(|_| DocError::BadPath("keyword is too long".into()))?;
        let mut hits = Vec::new();
        for doc in &self.docs {
            let mut last_line_end = 0;
            let mut line_no = 0;
            let mut cursor = 0;
            for found in pattern.find_iter(&doc.text) {
                if found.start() < last_line_end {
                    continue; // another match on a line already reported
                }
                line_no += doc.text[cursor..found.start()].matches('\n').count() + 1;
                let start = doc.text[..found.start()].rfind('\n').map_or(0, |i| i + 1);
                let end = doc.text[found.start()..]
                    .find('\n')
                    .map_or(doc.text.len(), |i| found.start() + i);
                cursor = (end + 1).min(doc.text.len());
                last_line_end = end + 1;
                let text: String = doc.text[start..end]
                    .trim()
                    .chars()
                    .take(MAX_HIT_CHARS)
                    .collect();
                hits.push(format!("{}:{line_no}: {text}", doc.path));
                if hits.len() == MAX_HITS {
                    return Ok(hits);
                }
            }
        }
        Ok(hits)
    }

    /// Lines `start..=end` of a document as `N: text`, at most [`MAX_READ_LINES`], the end
    /// clamped to the document's length.
    pub fn read(&self, requested: &str, start: usize, end: usize) -> Result<String, DocError> {
        let doc = self.get(requested)?;
        let count = doc.text.lines().count();
        if start == 0 {
            return Err(DocError::BadRange(
                "start must be 1 or more (lines are numbered from 1)".into(),
            ));
        }
        if end < start {
            return Err(DocError::BadRange(format!(
                "end ({end}) is before start ({start})"
            )));
        }
        if start > count {
            return Err(DocError::BadRange(format!(
                "start ({start}) is past the end of {} ({count} lines)",
                doc.path
            )));
        }
        let end = end.min(start + MAX_READ_LINES - 1).min(count);
        let lines: Vec<String> = doc
            .text
            .lines()
            .enumerate()
            .skip(start - 1)
            .take(end + 1 - start)
            .map(|(i, line)| format!("{}: {line}", i + 1))
            .collect();
        Ok(lines.join("\n"))
    }
}

/// Refuses every spelling of a path that is not a plain relative path inside the tree.
///
/// The index lookup alone already keeps reads inside the root; these checks exist so
/// that a client trying a traversal gets told why, rather than "not found".
fn check_path(path: &str) -> Result<&str, DocError> {
    let bad = |why: &str| Err(DocError::BadPath(format!("{why}: {path:?}")));
    if path.is_empty() {
        return bad("path is empty");
    }
    if path.contains('\0') {
        return bad("path contains a NUL byte");
    }
    if path.starts_with('/')
        || path.starts_with('\\')
        || path.get(1..3) == Some(":\\")
        || path.get(1..3) == Some(":/")
    {
        return bad("path must be relative to the documentation folder");
    }
    if path.contains('\\') {
        return bad("path must use '/' separators");
    }
    if path
        .split('/')
        .any(|part| part == ".." || part == "." || part.is_empty())
    {
        return bad("path must not contain '..', '.' or empty components");
    }
    let bytes = path.as_bytes();
    if bytes
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
    {
        return bad("percent-encoded paths are not accepted; give the path as list_docs shows it");
    }
    // Characters that render like '.' or '/' and that some layers normalise into them.
    const LOOK_ALIKES: &[char] = &[
        '\u{2024}', '\u{2025}', '\u{2026}', '\u{FE52}', '\u{FF0E}', '\u{2215}', '\u{2044}',
        '\u{FF0F}', '\u{29F8}', '\u{FE68}', '\u{FF3C}', '\u{2216}', '\u{0338}',
    ];
    if path.contains(LOOK_ALIKES) {
        return bad("path contains a character that looks like '.' or '/'");
    }
    if path.chars().any(char::is_control) {
        return bad("path contains a control character");
    }
    Ok(path)
}

/// `path` relative to `root` with `/` separators, if it is valid UTF-8.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Reads a file if, symlinks followed, it is a regular UTF-8 file under `root` and not
/// too large.
fn read_inside(root: &Path, path: &Path) -> Result<String, Refusal> {
    let real: PathBuf = path.canonicalize().map_err(|_| Refusal::OutsideRoot)?;
    if !real.starts_with(root) {
        return Err(Refusal::OutsideRoot);
    }
    let meta = std::fs::metadata(&real).map_err(|_| Refusal::NotRegular)?;
    if !meta.is_file() {
        return Err(Refusal::NotRegular);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(Refusal::TooLarge);
    }
    let bytes = std::fs::read(&real).map_err(|_| Refusal::NotRegular)?;
    // A file can grow between the stat and the read.
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Refusal::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| Refusal::NotUtf8)
}

/// The first Markdown heading outside fenced code blocks.
fn first_heading(text: &str) -> Option<String> {
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
        } else if !fenced && trimmed.starts_with('#') {
            let title = trimmed.trim_start_matches('#');
            if title.starts_with(' ') || title.is_empty() {
                let title = title.trim().trim_end_matches('#').trim();
                if !title.is_empty() {
                    return Some(title.to_owned());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings() {
        assert_eq!(
            first_heading("intro\n## Setup ##\n# Later"),
            Some("Setup".into())
        );
        assert_eq!(
            first_heading("```\n# not a heading\n```\n# Real"),
            Some("Real".into())
        );
        assert_eq!(first_heading("#hashtag\ntext"), None);
    }

    #[test]
    fn path_checks() {
        for ok in ["a.md", "dir/b.md", "dir/with space.md", "résumé.md"] {
            assert_eq!(check_path(ok), Ok(ok));
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x.md",
            "a/../../x.md",
            "a/./b.md",
            "a//b.md",
            "a\\b.md",
            "C:\\x",
            "%2e%2e/x.md",
            "\u{FF0E}\u{FF0E}/x.md",
            "a\u{2215}b",
            "a\0b",
            "a\nb",
        ] {
            assert!(
                matches!(check_path(bad), Err(DocError::BadPath(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn sorted_like_python_paths() {
        let lib = Library::from_memory(&[
            ("a-b.md", "x"),
            ("a/b.md", "x"),
            ("B.md", "x"),
            ("a.md", "x"),
        ]);
        let order: Vec<&str> = lib.docs().iter().map(|d| d.path.as_str()).collect();
        assert_eq!(order, ["B.md", "a/b.md", "a-b.md", "a.md"]);
    }
}
