//! The registry: every tool, resource and prompt of every adapter, indexed and pre-rendered
//! once per configuration load. Requests only read it (through an `Arc` snapshot), so a
//! reload swaps in a new registry while in-flight calls finish on the one they started with.
//!
//! - [`pages`]: pre-rendered list pages and stateless cursors.
//! - [`tool_schema`]: input validators and `x-mcp-header` arguments.
//! - [`search`]: the tool search index of `[discovery] mode = "search"`.
//! - `discover`: the advertised capabilities and the `server/discover` result.
//! - [`card`]: the SEP-2127 server card, made from the configuration.
//! - [`skills`]: the skills extension's listings, entries and directories (SEP-2640).

pub mod card;
mod discover;
pub mod pages;
pub mod search;
pub mod skills;
pub mod tool_schema;

use std::collections::HashMap;
use std::sync::Arc;

use mcp_adapter_api::uri_template::UriTemplate;
use mcp_adapter_api::{Adapter, ArgumentCheck, ConfigProblem, Problems, ToolPolicy};
use mcp_protocol::{Prompt, Resource, ResourceTemplate, Tool};
use serde_json::value::RawValue;

use crate::config::{Caching, Config, ConfigError, Discovery, ToolLimits};
use crate::rpc::response::ServerInfo;
pub use discover::Capabilities;
use discover::{capabilities_object, render_discover};
use pages::{Pages, page_renderer};
use tool_schema::{HeaderParam, LazyValidator, Validators};

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
    /// Indexes the adapters' catalogs and renders everything that does not depend on a request.
    /// Fails on duplicate names, bad schemas or bad `x-mcp-header` use, naming the adapter
    /// and the key; every problem, not the first. `adapters` may lack some of the config's
    /// (they failed to build, or an offline check does not build them): then tool names in
    /// `[tool_policies]` and `[rate_limits.tools]` are not checked, as they may be theirs.
    pub fn build(config: &Config, adapters: &[NamedAdapter]) -> Result<Self, ConfigError> {
        let server_info = ServerInfo::new(&config.server.info);
        let page_size = config.server.page_size;
        let mut problems = Problems::new();

        let mut tools: Vec<Arc<ToolEntry>> = Vec::new();
        let mut validators = Validators::default();
        let mut tool_owner: HashMap<String, String> = HashMap::new();
        let mut resources: Vec<(Resource, Arc<dyn Adapter>)> = Vec::new();
        let mut templates: Vec<(ResourceTemplate, UriTemplate, Arc<dyn Adapter>)> = Vec::new();
        let mut prompts: Vec<(Prompt, Arc<dyn Adapter>)> = Vec::new();
        let mut skill_sources: Vec<(&str, mcp_adapter_api::Skills, Arc<dyn Adapter>)> = Vec::new();
        let mut seen: HashMap<(&'static str, String), String> = HashMap::new();
        let mut claim = |what: &'static str, name: &str, adapter: &str, problems: &mut Problems| -> bool {
            match seen.insert((what, name.to_owned()), adapter.to_owned()) {
                Some(prev) => {
                    problems.add(
                        format!("adapters.{adapter}"),
                        format!("{what} '{name}' is also provided by adapter '{prev}'; names must be unique"),
                    );
                    false
                }
                None => true,
            }
        };

        for NamedAdapter { name: adapter_name, adapter, .. } in adapters {
            let catalog = adapter.catalog();
            let owner: Arc<str> = Arc::from(adapter_name.as_str());
            for spec in catalog.tools {
                let name = spec.tool.name.clone();
                let key = format!("adapters.{adapter_name}.tools.{name}");
                if !claim("tool", &name, adapter_name, &mut problems) {
                    continue;
                }
                if !valid_tool_name(&name) {
                    problems.add(key.clone(), "tool names must be 1-128 characters from A-Z a-z 0-9 _ - .");
                }
                let validator = validators.input(&spec.tool.input_schema).map_err(|p| problems.extend(p.under(&key)));
                let output_validator = spec
                    .tool
                    .output_schema
                    .as_ref()
                    .map(|s| validators.output(s).map_err(|p| problems.extend(p.under(&key))))
                    .transpose();
                let header_params =
                    tool_schema::header_params(&spec.tool.input_schema).map_err(|p| problems.add(key.clone(), p));
                let (Ok(validator), Ok(output_validator), Ok(header_params)) =
                    (validator, output_validator, header_params)
                else {
                    continue;
                };
                let mut policy = spec.policy;
                if let Some(o) = config.tool_policies.get(&name) {
                    o.apply_to(&mut policy);
                }
                tool_owner.insert(name.clone(), adapter_name.clone());
                tools.push(Arc::new(ToolEntry {
                    tool: spec.tool,
                    policy,
                    arguments: spec.arguments,
                    adapter: Arc::clone(adapter),
                    adapter_name: Arc::clone(&owner),
                    validator,
                    output_validator,
                    header_params,
                    limits: config.rate_limits.tools.get(&name).copied().unwrap_or(config.rate_limits.default),
                }));
            }
            for r in catalog.resources {
                if claim("resource", &r.uri, adapter_name, &mut problems) {
                    resources.push((r, Arc::clone(adapter)));
                }
            }
            for t in catalog.resource_templates {
                if !claim("resource template", &t.uri_template, adapter_name, &mut problems) {
                    continue;
                }
                match UriTemplate::parse(&t.uri_template) {
                    Ok(parsed) => templates.push((t, parsed, Arc::clone(adapter))),
                    Err(p) => problems.add(format!("adapters.{adapter_name}.resource_templates"), p),
                }
            }
            for p in catalog.prompts {
                if claim("prompt", &p.name, adapter_name, &mut problems) {
                    prompts.push((p, Arc::clone(adapter)));
                }
            }
            if let Some(s) = catalog.skills {
                skill_sources.push((adapter_name, s, Arc::clone(adapter)));
            }
        }
        let skills = skills::SkillIndex::build(&skill_sources, &config.caching, &server_info, page_size, &mut problems);

        if adapters.len() == config.adapters.len() {
            let policies = config.tool_policies.keys().map(|t| ("tool_policies", t));
            let limits = config.rate_limits.tools.keys().map(|t| ("rate_limits.tools", t));
            for (section, tool) in policies.chain(limits).filter(|(_, t)| !tool_owner.contains_key(*t)) {
                let known: Vec<&str> = tool_owner.keys().map(String::as_str).collect();
                let problem = ConfigProblem::new(
                    format!("{section}.{tool}"),
                    "no adapter provides a tool with this name (check the spelling)",
                )
                .at_key();
                problems.push(match mcp_adapter_api::closest(tool, known) {
                    Some(near) => problem.help(format!("did you mean `{near}`?")),
                    None => problem,
                });
            }
        }
        if config.discovery != Discovery::List {
            for t in tools.iter().filter(|t| search::is_search_tool(&t.tool.name)) {
                problems.add(
                    format!("adapters.{}.tools.{}", t.adapter_name, t.tool.name),
                    "this name is one of the three tools of [discovery] mode = \"search\"; rename the tool",
                );
            }
        }
        if !problems.is_empty() {
            return Err(ConfigError::Invalid(problems));
        }
        let search = match config.discovery {
            Discovery::List => None,
            Discovery::Search { results } => Some(search::SearchIndex::build(&tools, results).map_err(|e| {
                ConfigError::invalid("discovery.mode", format!("the tool search index could not be built: {e}"))
            })?),
        };
        // Lists keep configuration order (adapters in file order, each catalog in its own
        // order): deterministic across requests and replicas (MCP 2026-07-28 server/tools), and under the
        // operator's control, e.g. to put the most useful tools first.

        let capabilities = Capabilities {
            tools: true,
            // Skill files are read through resources/read: the extension needs the capability
            // (SEP-2640 § Capability Negotiation).
            resources: !resources.is_empty() || !templates.is_empty() || skills.declared,
            prompts: !prompts.is_empty(),
            completions: !prompts.is_empty() || !templates.is_empty(),
            skills: skills.declared,
        };
        let caching = config.caching;
        let info = &server_info;
        let search_defs = search.as_ref().map(|s| search::definitions(s.len()));
        let tool_defs: Vec<&Tool> = match &search_defs {
            Some(defs) => defs.iter().collect(),
            None => tools.iter().map(|t| &t.tool).collect(),
        };
        let tool_pages = Pages::build(
            &tool_defs,
            tool_defs.iter().map(|t| t.name.as_str()),
            page_size,
            page_renderer("tools", caching.tools_list, info),
        );
        let resource_defs: Vec<&Resource> = resources.iter().map(|r| &r.0).collect();
        let resource_pages = Pages::build(
            &resource_defs,
            resource_defs.iter().map(|r| r.uri.as_str()),
            page_size,
            page_renderer("resources", caching.resources_list, info),
        );
        let template_defs: Vec<&ResourceTemplate> = templates.iter().map(|t| &t.0).collect();
        let template_pages = Pages::build(
            &template_defs,
            template_defs.iter().map(|t| t.uri_template.as_str()),
            page_size,
            page_renderer("resourceTemplates", caching.resource_templates_list, info),
        );
        let prompt_defs: Vec<&Prompt> = prompts.iter().map(|p| &p.0).collect();
        let prompt_pages = Pages::build(
            &prompt_defs,
            prompt_defs.iter().map(|p| p.name.as_str()),
            page_size,
            page_renderer("prompts", caching.prompts_list, info),
        );

        let discover = render_discover(config, capabilities, &server_info);
        let card = config.server_card.as_ref().map(|c| card::render(c, config, capabilities_object(capabilities)));
        Ok(Self {
            discover,
            card,
            capabilities,
            caching,
            call_timeout: config.server.call_timeout,
            search,
            tools: tools.into_iter().map(|t| (t.tool.name.clone(), t)).collect(),
            tool_pages,
            resources: resources.into_iter().map(|(r, a)| (r.uri, a)).collect(),
            resource_pages,
            templates: templates.into_iter().map(|(_, parsed, a)| (parsed, a)).collect(),
            template_pages,
            prompts: prompts.into_iter().map(|(p, a)| (p.name.clone(), (p, a))).collect(),
            prompt_pages,
            skills,
            server_info,
            // Without the adapters' own sections: they are built already, and in a large
            // catalog they are most of the config (rebuild reads only the rest).
            sources: Arc::new((Config { adapters: Vec::new(), ..config.clone() }, adapters.to_vec())),
        })
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

    /// What changed from `old` to this registry, as list-changed events (after a reload).
    pub fn changes_since(&self, old: &Registry) -> Vec<mcp_adapter_api::Change> {
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

/// `[A-Za-z0-9_.-]{1,128}` (MCP 2026-07-28 server/tools).
fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}
