//! The registry: every tool, resource and prompt of every adapter, indexed and pre-rendered
//! once per configuration load. Requests only read it (through an `Arc` snapshot), so a
//! reload swaps in a new registry while in-flight calls finish on the one they started with.
//!
//! - `build`: the catalogs gathered and checked once, each registry assembled from its items.
//! - [`pages`]: pre-rendered list pages and stateless cursors.
//! - [`pins`]: definitions of `mcp` and `openapi` adapters checked against their pins.
//! - [`tool_schema`]: input validators and `x-mcp-header` arguments.
//! - [`search`]: the tool search index of `[discovery] mode = "search"`.
//! - `discover`: the advertised capabilities and the `server/discover` result.
//! - [`card`]: the SEP-2127 server card, made from the configuration.
//! - [`endpoints`]: what each virtual endpoint (`[[endpoints]]`) selects and overrides.
//! - [`skills`]: the skills extension's listings, entries and directories (SEP-2640).

mod build;
pub mod card;
mod discover;
pub mod endpoints;
pub mod pages;
pub mod pins;
pub mod search;
pub mod skills;
pub mod tool_schema;

use std::collections::HashMap;
use std::sync::Arc;

use mcp_adapter_api::uri_template::UriTemplate;
use mcp_adapter_api::{Adapter, ArgumentCheck, Problems, ToolPolicy};
use mcp_protocol::{Prompt, Tool};
use serde_json::value::RawValue;

use crate::config::{Caching, Config, ConfigError, ToolLimits};
use crate::events::Event;
use crate::rpc::response::ServerInfo;
use build::{View, assemble, gather};
pub use discover::Capabilities;
use discover::capabilities_object;
use pages::Pages;
use tool_schema::{HeaderParam, LazyValidator};

/// The adapter serving a URI, and the template variables when a template matched.
pub type ResourceRoute<'a> = (&'a Arc<dyn Adapter>, Option<std::collections::BTreeMap<String, String>>);

/// An adapter instance as built: its configured name and its kind (`rest`, `mcp`, ...). Who
/// needs the kind reads it here: the configuration kept after start-up has no adapter
/// sections (see [`Registry::config`]).
#[derive(Clone)]
pub struct NamedAdapter {
    /// The configured name (`[[adapters]] name`).
    pub name: String,
    /// The configured kind, as written in the file (`AdapterKind::as_str`).
    pub kind: &'static str,
    /// The instance.
    pub adapter: Arc<dyn Adapter>,
    /// Its `user_auth`: the `[[upstream_auth]]` its calls take each caller's own token from.
    pub user_auth: Option<Arc<str>>,
}

/// A tool and everything needed to call it.
pub struct ToolEntry {
    /// The listed definition.
    pub tool: Tool,
    /// Runtime policy.
    pub policy: ToolPolicy,
    /// Who checks its arguments against the input schema.
    pub arguments: ArgumentCheck,
    /// Which adapter runs it.
    pub adapter: Arc<dyn Adapter>,
    /// The adapter's configured name (logs, metrics).
    pub adapter_name: Arc<str>,
    /// Input schema validator (compiled on first use, shared by equal schemas).
    pub validator: Arc<LazyValidator>,
    /// Output schema validator, when the tool declares one.
    pub output_validator: Option<Arc<LazyValidator>>,
    /// `x-mcp-header` arguments.
    pub header_params: Vec<HeaderParam>,
    /// Its rate limits.
    pub limits: ToolLimits,
    /// On a virtual endpoint that renamed it or fixes arguments: its catalog name and the
    /// fixed arguments.
    pub origin: Option<Arc<endpoints::Origin>>,
    /// Its adapter's `user_auth` (calls carry the caller's own upstream token).
    pub user_auth: Option<Arc<str>>,
}

impl ToolEntry {
    /// The entry of a tool only one caller sees (`Adapter::caller_tools` of `named`), made
    /// for one call: the default policy and limits; `None` when its schemas do not compile.
    pub fn of_caller(spec: &mcp_adapter_api::ToolSpec, named: &NamedAdapter, config: &Config) -> Option<Self> {
        let mut validators = tool_schema::Validators::default();
        let validator = validators.input(&spec.tool.input_schema).ok()?;
        let output_validator = match &spec.tool.output_schema {
            Some(s) => Some(validators.output(s).ok()?),
            None => None,
        };
        // Never a task: `tasks/*` find their tool in the registry again.
        let policy = ToolPolicy { task: mcp_adapter_api::TaskSupport::Never, ..spec.policy.clone() };
        Some(Self {
            tool: spec.tool.clone(),
            policy,
            arguments: spec.arguments,
            adapter: Arc::clone(&named.adapter),
            adapter_name: Arc::from(named.name.as_str()),
            validator,
            output_validator,
            header_params: tool_schema::header_params(&spec.tool.input_schema).ok()?,
            limits: config.rate_limits.default,
            origin: None,
            user_auth: named.user_auth.clone(),
        })
    }

    /// Its name in the catalog (the adapter's, the access rules', the rate limits' and the
    /// metrics' name for it), whatever an endpoint calls it.
    pub fn catalog_name(&self) -> &str {
        self.origin.as_ref().map_or(&self.tool.name, |o| &o.name)
    }
}

/// The read-only index requests work from.
pub struct Registry {
    /// `serverInfo`, rendered once.
    pub server_info: ServerInfo,
    /// Advertised capabilities.
    pub capabilities: Capabilities,
    /// The complete `server/discover` result object.
    pub discover: Box<RawValue>,
    /// The server card's JSON, when `[server_card]` is on.
    pub card: Option<bytes::Bytes>,
    /// Cache hints.
    pub caching: Caching,
    /// Default call timeout.
    pub call_timeout: std::time::Duration,
    /// The tool search index, when `[discovery] mode = "search"` (then `tools/list` lists
    /// its three tools, and every catalog tool stays callable by name).
    pub search: Option<search::SearchIndex>,
    tools: HashMap<String, Arc<ToolEntry>>,
    tool_pages: Pages,
    resources: HashMap<String, Arc<dyn Adapter>>,
    resource_pages: Pages,
    templates: Vec<(UriTemplate, Arc<dyn Adapter>)>,
    template_pages: Pages,
    prompts: HashMap<String, (Prompt, Arc<dyn Adapter>)>,
    prompt_pages: Pages,
    /// The skills extension's index.
    pub skills: skills::SkillIndex,
    /// The virtual endpoint this registry serves (its path), `None` for `server.path`.
    pub endpoint: Option<Arc<str>>,
    /// The virtual endpoints' registries (`[[endpoints]]`), in file order; empty on theirs.
    endpoints: Vec<Arc<Registry>>,
    /// Definitions that are not the pinned ones (`[pinning]`): withheld or served.
    pub unpinned: Arc<[pins::Unpinned]>,
    /// What it was built from, to build it again when an adapter's catalog changes.
    sources: Arc<(Config, Vec<NamedAdapter>)>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").field("counts", &self.counts()).finish()
    }
}

/// How many items a registry serves, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Tools.
    pub tools: usize,
    /// Resources.
    pub resources: usize,
    /// Resource templates.
    pub templates: usize,
    /// Prompts.
    pub prompts: usize,
}

impl Registry {
    /// Indexes the adapters' catalogs and renders everything that does not depend on a request,
    /// for `server.path` and each virtual endpoint. Fails on duplicate names, bad schemas or
    /// bad `x-mcp-header` use, naming the adapter and the key; every problem, not the first.
    /// `adapters` may lack some of the config's (they failed to build, or an offline check
    /// does not build them): then tool names in `[tool_policies]`, `[rate_limits.tools]` and
    /// `[endpoints.tools]` are not checked, as they may be theirs.
    pub fn build(config: &Config, adapters: &[NamedAdapter]) -> Result<Self, ConfigError> {
        let mut problems = Problems::new();
        let items = gather(config, adapters, &mut problems);
        let complete = adapters.len() == config.adapters.len();
        let mut selected = Vec::with_capacity(config.endpoints.len());
        for e in &config.endpoints {
            selected.push(endpoints::select(e, &items, complete, &mut problems));
        }
        if !problems.is_empty() {
            return Err(ConfigError::Invalid(problems));
        }
        // Without the adapters' own sections: they are built already, and in a large catalog
        // they are most of the config (rebuild reads only the rest).
        let sources = Arc::new((Config { adapters: Vec::new(), ..config.clone() }, adapters.to_vec()));
        let mut endpoints = Vec::with_capacity(selected.len());
        for (e, chosen) in config.endpoints.iter().zip(selected) {
            let view = View {
                info: &e.info,
                instructions: e.instructions.as_deref(),
                endpoint: Some(&e.path),
                discovery: e.discovery,
            };
            endpoints.push(Arc::new(assemble(config, &view, chosen, Arc::clone(&sources), Vec::new())?));
        }
        let view = View {
            info: &config.server.info,
            instructions: config.server.instructions.as_deref(),
            endpoint: None,
            discovery: config.discovery,
        };
        let mut registry = assemble(config, &view, items, sources, endpoints)?;
        registry.card =
            config.server_card.as_ref().map(|c| card::render(c, config, capabilities_object(registry.capabilities)));
        for u in registry.unpinned.iter() {
            let change = if u.pinned.is_some() { "differs from its pin" } else { "has no pin" };
            let action = if u.withheld { "withheld until pinned" } else { "served ([pinning] mode = \"warn\")" };
            tracing::warn!(
                item = %u.key,
                adapter = %u.adapter,
                withheld = u.withheld,
                "definition {change}: {action}; review it and run `mcp-runtime pin` to approve it"
            );
        }
        Ok(registry)
    }

    /// The registry of the virtual endpoint at `path`.
    pub fn endpoint(&self, path: &str) -> Option<&Arc<Registry>> {
        self.endpoints.iter().find(|r| r.endpoint.as_deref() == Some(path))
    }

    /// The virtual endpoints' registries, in file order.
    pub fn endpoints(&self) -> &[Arc<Registry>] {
        &self.endpoints
    }

    /// Whether `method` (`tools/call`, `prompts/get`, `resources/read`) names an item this
    /// registry serves; `true` for other methods.
    pub fn serves(&self, method: &str, name: &str) -> bool {
        match method {
            "tools/call" => self.tools.contains_key(name),
            "prompts/get" => self.prompts.contains_key(name),
            "resources/read" => self.resource(name).is_some(),
            _ => true,
        }
    }

    /// The catalog name (what access rules, rate limits and metrics call it) of the tool this
    /// registry lists as `name`: `name` itself on `server.path`, without a lookup (the hot
    /// path); on a virtual endpoint the renamed tool's catalog name, `None` when the endpoint
    /// does not serve it.
    pub fn catalog_name<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        if self.endpoint.is_none() {
            return Some(name);
        }
        self.tools.get(name).map(|t| t.catalog_name())
    }

    /// Every tool, in no particular order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<ToolEntry>> {
        self.tools.values()
    }

    /// The same configuration and adapters built again, reading every catalog anew (after an
    /// adapter signalled that its catalog changed).
    pub fn rebuild(&self) -> Result<Self, ConfigError> {
        Self::build(&self.sources.0, &self.sources.1)
    }

    /// How many items it serves, by kind.
    pub fn counts(&self) -> Counts {
        Counts {
            tools: self.tools.len(),
            resources: self.resources.len(),
            templates: self.templates.len(),
            prompts: self.prompts.len(),
        }
    }

    /// The adapters it was built from, in file order.
    pub fn adapters(&self) -> &[NamedAdapter] {
        &self.sources.1
    }

    /// The configuration this registry was built from, without its `[[adapters]]` sections
    /// (the built [`Registry::adapters`] stand for them).
    pub fn config(&self) -> &Config {
        &self.sources.0
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.tools.get(name)
    }

    /// The prompt named `name` and its adapter.
    pub fn prompt(&self, name: &str) -> Option<&(Prompt, Arc<dyn Adapter>)> {
        self.prompts.get(name)
    }

    /// Every prompt's name.
    pub fn prompt_names(&self) -> impl Iterator<Item = &str> {
        self.prompts.keys().map(String::as_str)
    }

    /// The adapter serving `uri`: a listed resource first, then a skill's file, then the
    /// first matching template.
    pub fn resource(&self, uri: &str) -> Option<ResourceRoute<'_>> {
        if let Some(a) = self.resources.get(uri).or_else(|| self.skills.file(uri)) {
            return Some((a, None));
        }
        self.templates.iter().find_map(|(t, a)| t.matches(uri).map(|vars| (a, Some(vars))))
    }

    /// The adapter owning the template `uri_template` (completion of template variables).
    pub fn template_adapter(&self, uri_template: &str) -> Option<&Arc<dyn Adapter>> {
        self.templates.iter().find(|(t, _)| t.source() == uri_template).map(|(_, a)| a)
    }

    /// What changed from `old` to this registry, as list-changed events, each heard on the
    /// path whose lists changed: `server.path` and each virtual endpoint that was there
    /// before (a new endpoint has no listeners yet).
    pub fn changes_since(&self, old: &Registry) -> Vec<Event> {
        let main: Arc<str> = Arc::from(self.config().server.path.as_str());
        let mut out: Vec<_> =
            self.list_changes(old).into_iter().map(|change| Event { path: Some(Arc::clone(&main)), change }).collect();
        for e in &self.endpoints {
            let Some(path) = &e.endpoint else { continue };
            if let Some(before) = old.endpoint(path) {
                out.extend(
                    e.list_changes(before).into_iter().map(|change| Event { path: Some(Arc::clone(path)), change }),
                );
            }
        }
        out
    }

    /// Which of this registry's own lists differ from `old`'s.
    fn list_changes(&self, old: &Registry) -> Vec<mcp_adapter_api::Change> {
        use mcp_adapter_api::Change;
        let mut out = Vec::new();
        if self.tool_pages.fingerprint() != old.tool_pages.fingerprint() {
            out.push(Change::ToolsListChanged);
        }
        if self.prompt_pages.fingerprint() != old.prompt_pages.fingerprint() {
            out.push(Change::PromptsListChanged);
        }
        if self.resource_pages.fingerprint() != old.resource_pages.fingerprint()
            || self.template_pages.fingerprint() != old.template_pages.fingerprint()
        {
            out.push(Change::ResourcesListChanged);
        }
        out
    }

    /// A page of `tools/list`.
    pub fn tools_page(&self, cursor: Option<&str>) -> Result<&RawValue, crate::rpc::RpcError> {
        self.tool_pages.page(cursor)
    }

    /// A page of `resources/list`.
    pub fn resources_page(&self, cursor: Option<&str>) -> Result<&RawValue, crate::rpc::RpcError> {
        self.resource_pages.page(cursor)
    }

    /// A page of `resources/templates/list`.
    pub fn templates_page(&self, cursor: Option<&str>) -> Result<&RawValue, crate::rpc::RpcError> {
        self.template_pages.page(cursor)
    }

    /// A page of `skills/list`.
    pub fn skills_page(&self, cursor: Option<&str>) -> Result<&RawValue, crate::rpc::RpcError> {
        self.skills.page(cursor)
    }

    /// A page of `prompts/list`.
    pub fn prompts_page(&self, cursor: Option<&str>) -> Result<&RawValue, crate::rpc::RpcError> {
        self.prompt_pages.page(cursor)
    }
}
