//! The OpenAPI adapter: every selected operation of an OpenAPI 3.0/3.1 document (JSON or
//! YAML, a file or a URL, read at start and on every reload) becomes a tool that the REST
//! adapter runs: the same pool, retries, secrets, redirect rules and response mapping, no
//! second HTTP client.
//!
//! - [`config`]: the config as written (`[[adapters]] kind = "openapi"`), the selection.
//! - [`source`]: reading the document and its sibling files, resolving `$ref`s.
//! - [`ids`]: `$id` and `$anchor` (JSON Schema 2020-12 identification) for `$ref`s.
//! - [`yaml`]: document text (JSON or YAML) as JSON values.
//! - [`schema`]: OpenAPI schemas as JSON Schema 2020-12 (`$defs`, `allOf`, 3.0 dialect).
//! - [`params`]: parameters and request bodies as REST parameters and schema properties.
//! - [`encoding`]: the Encoding Object of form and multipart bodies, property by property.
//! - [`security`]: security requirements mapped to configured credentials.
//! - [`servers`]: where each operation is sent (its own, its path item's or the root `servers`).
//! - [`names`]: valid, unique, stable tool names.
//! - [`import`]: the driver, and the [`Report`] that `mcp-runtime check` prints.

pub mod config;
pub mod encoding;
pub mod ids;
pub mod import;
pub mod names;
pub mod params;
pub mod schema;
pub mod security;
pub mod servers;
pub mod source;
pub mod yaml;

use mcp_adapter_api::protocol::CallToolResult;
use mcp_adapter_api::{
    Adapter, AdapterError, BuildContext, CallContext, Catalog, ConfigProblem, Outcome, Problems, ToolCall, async_trait,
};
use mcp_adapter_rest::{Rest, RestConfig};
use serde_json::Value;

pub use config::OpenApiConfig;
pub use import::{Imported, Options, Report};
pub use source::Documents;

/// The adapter: the REST adapter serving the imported tools, and what the import reported.
#[derive(Debug)]
pub struct OpenApi {
    rest: Rest,
    report: Report,
}

impl OpenApi {
    /// Reads the document (fetching it when it is a URL; a relative path starts at the config
    /// file's folder), imports it and builds the REST adapter, reporting every problem.
    /// Problems name the key below the adapter (`spec`, `credentials.key`). Offline, a local
    /// document is read (it ships with the config) but a URL is not fetched: the adapter's
    /// other keys are checked and it offers no tools.
    pub async fn load(config: &OpenApiConfig, cx: &BuildContext) -> Result<Self, Problems> {
        check_bounds(config)?;
        let remote = config.spec.starts_with("http://") || config.spec.starts_with("https://");
        if remote && cx.env.is_offline() {
            let mut http = http_config(config)?;
            // The document's `servers` are not known offline: its own URL stands in.
            if http.base_urls.is_empty() {
                http.base_urls = vec![config.spec.clone()];
            }
            let rest = Rest::with_plans(&http, None, Vec::new(), &cx.env).map_err(|p| p.under("http"))?;
            return Ok(Self { rest, report: Report::default() });
        }
        let spec = if remote { config.spec.clone() } else { cx.env.path(&config.spec).to_string_lossy().into_owned() };
        let docs = Documents::load(&spec, config.max_spec_bytes).await.map_err(|p| ConfigProblem::new("spec", p))?;
        Self::from_documents(config, &docs, cx)
    }

    /// The adapter for documents already read.
    pub fn from_documents(config: &OpenApiConfig, docs: &Documents, cx: &BuildContext) -> Result<Self, Problems> {
        let mut problems = Problems::new();
        let http = problems.ok(http_config(config));
        let root = docs.root();
        problems.ok(import::version(root).map_err(|p| ConfigProblem::new("spec", p)));
        let credentials = problems.ok(security::Configured::resolve(&config.credentials, &cx.env));
        let schemes = root.pointer("/components/securitySchemes").and_then(Value::as_object);
        for unknown in config.credentials.keys().filter(|n| !schemes.is_some_and(|s| s.contains_key(*n))) {
            let declared: Vec<&str> = schemes.into_iter().flat_map(|s| s.keys().map(String::as_str)).collect();
            problems.add(format!("credentials.{unknown}"), security::undeclared_credential(unknown, &declared));
        }
        if let Err(p) = check_bounds(config) {
            problems.extend(p);
        }
        let (Some(mut http), Some(credentials)) = (http, credentials) else { return Err(problems) };
        if !problems.is_empty() {
            return Err(problems);
        }
        // Without `http.base_urls`, the document says where each operation goes (servers.rs).
        let own_servers = http.base_urls.is_empty();
        if own_servers {
            let root = servers::first(
                docs,
                0,
                docs.root().get("servers").filter(|s| s.as_array().is_some_and(|a| !a.is_empty())),
            )
            .map_err(|p| ConfigProblem::new("http.base_urls", p))?
            .ok_or_else(|| ConfigProblem::new("http.base_urls", "the document lists no servers: set http.base_urls"))?;
            http.base_urls = vec![root];
        }
        let options = Options {
            servers: own_servers,
            include: config.include.clone(),
            exclude: config.exclude.clone(),
            read_only: config.read_only,
            max_description_chars: config.max_description_chars,
            max_schema_bytes: config.max_schema_bytes,
        };
        let Imported { tools, report } =
            import::import(docs, &options, &credentials).map_err(|p| ConfigProblem::new("spec", p))?;
        let rest = Rest::with_plans(&http, None, tools, &cx.env).map_err(|p| p.under("http"))?;
        Ok(Self { rest: rest.observed(&cx.observe), report })
    }

    /// What the import made and left out.
    pub fn report(&self) -> &Report {
        &self.report
    }
}

/// The size keys that must be at least 1.
fn check_bounds(config: &OpenApiConfig) -> Result<(), Problems> {
    let mut problems = Problems::new();
    if config.max_description_chars == 0 {
        problems.add("max_description_chars", "must be at least 1");
    }
    if config.max_spec_bytes == 0 {
        problems.add(
            "max_spec_bytes",
            "must be at least 1 (the bytes of the document and every file it references, together)",
        );
    }
    problems.finish(|| ())
}

/// `http` as written (the REST adapter's upstream settings), which may not declare tools
/// or credentials of its own.
fn http_config(config: &OpenApiConfig) -> Result<RestConfig, ConfigProblem> {
    let http = match &config.http {
        Some(h) => h.clone(),
        None => serde_json::from_value::<RestConfig>(serde_json::json!({}))
            .map_err(|e| ConfigProblem::new("http", e.to_string()))?,
    };
    if !http.tools.is_empty() || http.auth.is_some() {
        return Err(ConfigProblem::new(
            "http",
            "tools come from the document and credentials from `credentials`: remove http.tools and http.auth",
        ));
    }
    Ok(http)
}

#[async_trait]
impl Adapter for OpenApi {
    fn catalog(&self) -> Catalog {
        self.rest.catalog()
    }

    async fn call_tool(&self, call: ToolCall<'_>, cx: &CallContext) -> Result<Outcome<CallToolResult>, AdapterError> {
        self.rest.call_tool(call, cx).await
    }

    fn report(&self) -> Option<String> {
        Some(self.report.to_string())
    }

    fn status(&self) -> mcp_adapter_api::Status {
        self.rest.status()
    }
}

#[cfg(test)]
mod tests;
