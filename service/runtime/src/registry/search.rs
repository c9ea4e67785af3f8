//! Tool search for large catalogs (`[discovery] mode = "search"`): a BM25 index over every
//! tool's name, title, description and parameter names, built with the registry (at config
//! load and on every catalog change), and the three tools a search-mode `tools/list` shows
//! instead of the catalog.
//!
//! The index is `tantivy`'s, in memory, one segment whose document numbers are the tools'
//! places: one text field per tool, term dictionary and postings with term frequencies (no
//! positions, no stored text). Its top-k search
//! (block-max WAND) scores only the documents that can still enter the top k, so a query
//! costs what its rare terms cost, not every tool that shares a common word with it. Text is
//! split into words (`listRepoIssues`, `list_repo_issues` and `repos/list-issues` all index
//! as `list repo issues`), lower-cased, stripped of English stop words and stemmed (Snowball),
//! for documents and queries alike. A tool is one document of its name (twice: a name word
//! counts twice a word of prose), title, description and parameter names; one field ranked
//! better than four on the measured catalogs (Graph's top-5: 87 % against 69 %), as a name's
//! words and its description's then share one length norm and one term statistic.

use std::sync::Arc;

use mcp_protocol::types::Tool;
use serde_json::{Value, json};
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};
use tantivy::{Index, IndexReader, ReloadPolicy, SingleSegmentIndexWriter, TantivyDocument};

use super::ToolEntry;

/// The tool that ranks the catalog for a query.
pub const SEARCH_TOOL: &str = "search_tools";
/// The tool that returns full definitions by name.
pub const DESCRIBE_TOOL: &str = "describe_tools";
/// The tool that runs any tool of the catalog by name.
pub const CALL_TOOL: &str = "call_tool";

pub use crate::config::discovery::MAX_RESULTS;
/// Most definitions one `describe_tools` returns.
pub const MAX_DESCRIBE: usize = 20;

/// Whether `name` is one of the three search-mode tools.
pub fn is_search_tool(name: &str) -> bool {
    matches!(name, SEARCH_TOOL | DESCRIBE_TOOL | CALL_TOOL)
}

/// The name of the analyzer the index registers.
const ANALYZER: &str = "tool_words";
/// Bytes the index writer may buffer while the index is built (then freed).
const WRITER_BYTES: usize = 64 << 20;

/// The index over one registry's tools.
pub struct SearchIndex {
    reader: IndexReader,
    parser: QueryParser,
    /// Document number → tool (the registry's entries, shared).
    tools: Vec<Arc<ToolEntry>>,
    /// Results a search returns when the caller names no `limit`.
    pub default_limit: usize,
}

/// One ranked tool.
pub struct Hit<'a> {
    /// The tool.
    pub entry: &'a Arc<ToolEntry>,
    /// Its BM25 score for the query.
    pub score: f32,
}

impl SearchIndex {
    /// Indexes `tools` (in catalog order). Fails only if the in-memory index cannot be
    /// written (no file system is involved).
    pub fn build(tools: &[Arc<ToolEntry>], default_limit: usize) -> tantivy::Result<Self> {
        let mut schema = Schema::builder();
        let words = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default().set_tokenizer(ANALYZER).set_index_option(IndexRecordOption::WithFreqs),
        );
        let text = schema.add_text_field("text", words);
        let index = Index::create_in_ram(schema.build());
        let stop_words = StopWordFilter::new(Language::English).expect("tantivy ships English stop words");
        let analyzer = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(40))
            .filter(LowerCaser)
            .filter(stop_words)
            .filter(Stemmer::new(Language::English))
            .build();
        index.tokenizers().register(ANALYZER, analyzer);
        // One segment, written on this thread: document `n` is `tools[n]`.
        let mut writer = SingleSegmentIndexWriter::<TantivyDocument>::new(index, WRITER_BYTES)?;
        for entry in tools {
            let mut doc = TantivyDocument::default();
            doc.add_text(text, document(&entry.tool));
            writer.add_document(doc)?;
        }
        let index = writer.finalize()?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        let parser = QueryParser::for_index(&index, vec![text]);

        Ok(Self { reader, parser, tools: tools.to_vec(), default_limit })
    }

    /// The tools that match `query` best, best first: at most `limit` of those `visible`
    /// admits (the caller's access rules), `hidden` being how many it does not.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        hidden: usize,
        visible: impl Fn(&ToolEntry) -> bool,
    ) -> Vec<Hit<'_>> {
        let limit = limit.clamp(1, MAX_RESULTS);
        // Words only: the query language's operators (`field:`, `-`, quotes) mean nothing to
        // a model describing a task.
        let words: String =
            split_identifiers(query).chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
        let (query, _) = self.parser.parse_query_lenient(&words);
        let searcher = self.reader.searcher();
        let Ok(top) = searcher.search(&query, &TopDocs::with_limit(limit + hidden)) else { return Vec::new() };
        top.into_iter()
            .filter_map(|(score, at)| {
                let entry = self.tools.get(at.doc_id as usize)?;
                visible(entry).then_some(Hit { entry, score })
            })
            .take(limit)
            .collect()
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// What is indexed of a tool: its name twice, title, description and the names of its
/// top-level parameters, split into words.
fn document(tool: &Tool) -> String {
    let mut text = String::with_capacity(256);
    for part in [Some(tool.name.as_str()), Some(tool.name.as_str()), tool.title.as_deref(), tool.description.as_deref()]
        .into_iter()
        .flatten()
    {
        text.push_str(part);
        text.push('\n');
    }
    if let Some(Value::Object(props)) = tool.input_schema.get("properties") {
        for name in props.keys() {
            text.push_str(name);
            text.push(' ');
        }
    }
    split_identifiers(&text)
}

/// `getUserByID` → `get User By ID`; `_`, `-`, `.`, `/` and `{}` become spaces.
fn split_identifiers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let boundary = match prev {
            // aB, 1B
            Some(p) if c.is_uppercase() && (p.is_lowercase() || p.is_ascii_digit()) => true,
            // ABc: the last capital of a run starts the next word (`IDToken` → `ID Token`)
            Some(p) if c.is_uppercase() && p.is_uppercase() => chars.peek().is_some_and(|n| n.is_lowercase()),
            _ => false,
        };
        if boundary {
            out.push(' ');
        }
        out.push(if matches!(c, '_' | '-' | '.' | '/' | '{' | '}') { ' ' } else { c });
        prev = Some(c);
    }
    out
}

/// The three tools a search-mode `tools/list` shows (MCP 2026-07-28 server/tools: ordinary
/// tools; a client needs nothing beyond `tools/call` to use them).
pub fn definitions(catalog_size: usize) -> Vec<Tool> {
    let tool = |value: Value| serde_json::from_value::<Tool>(value).expect("a valid built-in tool definition");
    vec![
        tool(json!({
            "name": SEARCH_TOOL,
            "title": "Search tools",
            "description": format!(
                "Find tools among the {catalog_size} this server offers: describe the task in a few words \
                 (e.g. \"list open issues of a repository\"). Returns the best matches, best first, each with \
                 its name and a short description. Then call `{DESCRIBE_TOOL}` for their parameters and \
                 `{CALL_TOOL}` to run one."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "What the tool should do, in words."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "description": "How many results (default 10)."}
                },
                "required": ["query"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {"tools": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "title": {"type": "string"},
                    "description": {"type": "string"}, "score": {"type": "number"}
                }, "required": ["name", "score"]}}},
                "required": ["tools"]
            },
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
        })),
        tool(json!({
            "name": DESCRIBE_TOOL,
            "title": "Describe tools",
            "description": format!(
                "Full definitions (input schema, annotations) of up to {MAX_DESCRIBE} tools by name, as \
                 `{SEARCH_TOOL}` returned them."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {"names": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_DESCRIBE}},
                "required": ["names"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "tools": {"type": "array", "items": {"type": "object"}},
                    "unknown": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["tools"]
            },
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
        })),
        tool(json!({
            "name": CALL_TOOL,
            "title": "Call a tool",
            "description": format!(
                "Run one tool of the catalog by name with its arguments (as `{DESCRIBE_TOOL}` describes \
                 them). The result is that tool's result."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "description": "The tool's name."},
                    "arguments": {"type": "object", "description": "Its arguments."}
                },
                "required": ["name"],
                "additionalProperties": false
            }
        })),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_become_words() {
        assert_eq!(split_identifiers("listRepoIssues"), "list Repo Issues");
        assert_eq!(split_identifiers("get_user-by.id"), "get user by id");
        assert_eq!(split_identifiers("IDToken v2Beta"), "ID Token v2 Beta");
        assert_eq!(split_identifiers("/repos/{owner}/issues"), " repos  owner  issues");
    }

    #[test]
    fn the_definitions_parse() {
        let defs = definitions(3);
        assert_eq!(defs.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), [SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL]);
        assert!(defs.iter().all(|t| is_search_tool(&t.name)));
    }
}
