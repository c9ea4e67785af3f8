//! A minimal stateless MCP server on the official Rust SDK (rmcp 3.x), for
//! loadtest/bench-peers.sh: `echo` and `add` tools over Streamable HTTP, no sessions
//! (2026-07-28 requests are always served statelessly; legacy session mode is off too),
//! JSON answers rather than SSE for plain calls, like the runtime.
//!
//! `bench-rmcp-server ADDR` serves `http://ADDR/mcp` and prints `listening on http://ADDR/mcp`.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text to echo.
    text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(Debug, Clone)]
struct Bench {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Bench {
    #[tool(description = "Echo the given text back.")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    #[tool(description = "Add two numbers.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }
}

// The router built once at start-up and cloned into each request's handler (the service
// factory runs per request in stateless mode), rather than the macro's default of
// building it per call: the fastest way to use the SDK, so the comparison is fair to it.
#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8091".to_owned());
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let router = Bench::tool_router();
    let service: StreamableHttpService<Bench, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(Bench { tool_router: router.clone() }), Default::default(), config);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, axum::Router::new().nest_service("/mcp", service)).await
}
