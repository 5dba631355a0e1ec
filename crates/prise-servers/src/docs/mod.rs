//! The documentation server: `grep_docs`, `read_doc` and `list_docs` over a folder of
//! Markdown, each document also a `docs://` resource, and a `cite_answer` prompt.
//!
//! Tool and parameter descriptions are the doc comments below: rmcp's macros turn them
//! into the schema a model reads, so they are written for a model.

mod library;

use std::sync::Arc;

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, Implementation, ListResourcesResult,
    PaginatedRequestParams, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, prompt, prompt_handler, prompt_router, schemars, tool,
    tool_handler, tool_router,
};
use serde::Deserialize;

pub use library::{DocError, Library, MAX_FILE_BYTES, MAX_HITS, MAX_READ_LINES, Refusal};

/// Scheme of the resources the server lists: `docs://relative/path.md`.
pub const URI_SCHEME: &str = "docs://";
/// Resources per `resources/list` page.
const PAGE: usize = 500;

/// An MCP server over one [`Library`]. Cheap to clone: clones share the index.
#[derive(Clone)]
pub struct DocsServer {
    library: Arc<Library>,
    name: String,
    tool_router: ToolRouter<DocsServer>,
    prompt_router: PromptRouter<DocsServer>,
}

/// Arguments of `grep_docs`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GrepArgs {
    /// The word or phrase to look for, matched case-insensitively, e.g. "timeout".
    pub keyword: String,
}

/// Arguments of `read_doc`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadArgs {
    /// The document's path relative to the documentation folder, as grep_docs or list_docs print it, e.g. "advanced/timeouts.md".
    pub path: String,
    /// First line to read, counting from 1.
    #[serde(default = "first_line")]
    pub start: usize,
    /// Last line to read (inclusive); at most 80 lines are returned per call.
    #[serde(default = "last_line")]
    pub end: usize,
}

fn first_line() -> usize {
    1
}

fn last_line() -> usize {
    MAX_READ_LINES
}

/// Arguments of the `cite_answer` prompt.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CiteArgs {
    /// The question to answer from the documentation.
    pub question: String,
}

#[tool_router]
impl DocsServer {
    /// Search every Markdown document for a keyword (case-insensitive). Returns up to 20 hits as `path:LINE: text`, in path order; use read_doc on a hit's path and line to read around it.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    fn grep_docs(&self, Parameters(GrepArgs { keyword }): Parameters<GrepArgs>) -> CallToolResult {
        match self.library.grep(&keyword) {
            Ok(hits) if hits.is_empty() => text(format!("no match for {keyword}")),
            Ok(hits) => text(hits.join("\n")),
            Err(e) => error(e),
        }
    }

    /// Read lines of one document, numbered as `N: text`. At most 80 lines per call; the end is clamped to the document's length. Call again with a later start to read further.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    fn read_doc(
        &self,
        Parameters(ReadArgs { path, start, end }): Parameters<ReadArgs>,
    ) -> CallToolResult {
        match self.library.read(&path, start, end) {
            Ok(lines) => text(lines),
            Err(e) => error(e),
        }
    }

    /// List every document as `path — title` (its first heading), to browse the documentation when a search finds nothing.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    fn list_docs(&self) -> CallToolResult {
        let lines: Vec<String> = self
            .library
            .docs()
            .iter()
            .map(|doc| match &doc.title {
                Some(title) => format!("{} — {title}", doc.path),
                None => doc.path.clone(),
            })
            .collect();
        if lines.is_empty() {
            text("no documents".to_owned())
        } else {
            text(lines.join("\n"))
        }
    }
}

// The macro generates an undocumented metadata function per prompt.
#[allow(missing_docs)]
#[prompt_router]
impl DocsServer {
    /// Answer a question only from this documentation, citing `path:line` for every claim.
    #[prompt]
    fn cite_answer(
        &self,
        Parameters(CiteArgs { question }): Parameters<CiteArgs>,
    ) -> GetPromptResult {
        let instructions = format!(
            "Answer the question below using only the documentation available through the tools grep_docs, \
             read_doc and list_docs. Search first, then read the passages you rely on. Cite every claim as \
             path:line (for example `guide/setup.md:12`). If the documentation does not answer the question, \
             say so plainly instead of guessing.\n\nQuestion: {question}"
        );
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, instructions)])
            .with_description("Answer from the documentation with path:line citations")
    }
}

// The routers are built once in `new`; the macros' default would rebuild them per request.
#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for DocsServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(self.name.clone(), env!("CARGO_PKG_VERSION")).with_title("prise documentation server"))
            .with_instructions(
                "Documentation search. Use grep_docs to find where a topic is mentioned, then read_doc to read the \
                 lines around a hit; cite answers as path:line.",
            )
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let docs = self.library.docs();
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|&i| i <= docs.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("bad cursor {cursor:?}"), None))?,
        };
        let end = (start + PAGE).min(docs.len());
        let resources = docs[start..end]
            .iter()
            .map(|doc| {
                let resource = Resource::new(
                    format!("{URI_SCHEME}{}", encode(&doc.path)),
                    doc.path.clone(),
                )
                .with_mime_type("text/markdown")
                .with_size(doc.text.len() as u64);
                match &doc.title {
                    Some(title) => resource.with_title(title.clone()),
                    None => resource,
                }
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = (end < docs.len()).then(|| end.to_string());
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let not_found = |why: String| {
            ErrorData::resource_not_found(why, Some(serde_json::json!({ "uri": uri })))
        };
        let Some(path) = uri.strip_prefix(URI_SCHEME).and_then(decode) else {
            return Err(not_found(format!(
                "not a document URI: {uri} (expected {URI_SCHEME}path.md)"
            )));
        };
        match self.library.get(&path) {
            Ok(doc) => {
                let contents = ResourceContents::TextResourceContents {
                    uri: uri.clone(),
                    mime_type: Some("text/markdown".into()),
                    text: doc.text.clone(),
                    meta: None,
                };
                Ok(ReadResourceResult::new(vec![contents]).into())
            }
            Err(e) => Err(not_found(e.to_string())),
        }
    }
}

impl DocsServer {
    /// A server named `name` (as it introduces itself to clients) over `library`.
    pub fn new(name: impl Into<String>, library: Library) -> DocsServer {
        DocsServer {
            library: Arc::new(library),
            name: name.into(),
            tool_router: Self::tool_router(),
            prompt_router: Self::prompt_router(),
        }
    }

    /// The library it serves.
    pub fn library(&self) -> &Library {
        &self.library
    }
}

fn text(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn error(e: DocError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("error: {e}"))])
}

/// Percent-encodes what may not appear in a URI path.
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Reverses [`encode`]; `None` for malformed escapes or non-UTF-8 results.
fn decode(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};

    #[test]
    fn uris_round_trip() {
        for path in ["a.md", "dir/with space.md", "résumé.md", "100%.md"] {
            assert_eq!(decode(&encode(path)).as_deref(), Some(path));
        }
        assert_eq!(encode("dir/with space.md"), "dir/with%20space.md");
        assert_eq!(decode("%zz"), None);
    }
}
