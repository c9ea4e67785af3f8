//! MCP protocol revision 2026-07-28: the wire types this runtime sends and reads.
//!
//! Types only, serde only, no I/O. Everything the server *produces* is typed; values the
//! runtime passes through untouched (JSON Schemas, client capabilities) stay `serde_json::Value`.
//!
//! - [`capabilities`]: does a request's `clientCapabilities` cover what an operation needs.
//! - [`version`]: protocol revisions we serve and recognise.
//! - [`meta`]: the reserved `_meta` keys of the per-request envelope and of results.
//! - [`jsonrpc`]: request ids and the JSON-RPC error object.
//! - [`error`]: the error-code registry (MCP 2026-07-28 basic § Error codes).
//! - [`headers`]: the HTTP request-metadata headers and the Base64 sentinel (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers).
//! - [`content`]: content blocks and resource contents (MCP 2026-07-28 server/tools § Content).
//! - [`types`]: tools, resources, prompts, completion, discover, caching hints.
//! - [`mrtr`]: multi round-trip requests: input requests and responses (MCP 2026-07-28 basic/patterns/mrtr).
//! - [`schema`]: one shared copy of each distinct JSON Schema.
//! - [`tasks`]: the `io.modelcontextprotocol/tasks` extension types (MCP tasks extension).
//! - [`skills`]: the `io.modelcontextprotocol/skills` extension types (SEP-2640).

pub mod capabilities;
pub mod content;
pub mod error;
pub mod headers;
pub mod jsonrpc;
pub mod meta;
pub mod mrtr;
pub mod schema;
pub mod skills;
pub mod tasks;
pub mod types;
pub mod version;

pub use content::{Annotations, ContentBlock, ResourceContents};
pub use error::ErrorCode;
pub use jsonrpc::{ErrorObject, RequestId};
pub use types::*;
