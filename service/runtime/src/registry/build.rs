//! Building a registry: every adapter's catalog gathered and checked once ([`gather`]), then
//! each registry (`server.path`'s, each virtual endpoint's) assembled from its items: list
//! pages, `server/discover`, the search index ([`assemble`]).

use std::collections::HashMap;
use std::sync::Arc;

use mcp_adapter_api::uri_template::UriTemplate;
use mcp_adapter_api::{Adapter, ConfigProblem, Problems};
use mcp_protocol::{Prompt, Resource, ResourceTemplate, Tool};

use super::discover::{Capabilities, render_discover};
use super::pages::{Pages, page_renderer};
use super::pins::{Checker, Unpinned};
use super::tool_schema::{self, Validators};
use super::{NamedAdapter, Registry, ToolEntry, search, skills};
use crate::config::{Config, ConfigError, Discovery};
use crate::rpc::response::ServerInfo;

/// Everything the adapters serve, indexed and checked: what `server.path` serves and every
/// virtual endpoint selects from. Each item keeps its adapter's name.
#[derive(Default)]
pub(super) struct Items {
    pub(super) tools: Vec<Arc<ToolEntry>>,
    pub(super) resources: Vec<Owned<Resource>>,
    pub(super) templates: Vec<Owned<(ResourceTemplate, UriTemplate)>>,
    pub(super) prompts: Vec<Owned<Prompt>>,
    pub(super) skills: Vec<(Arc<str>, mcp_adapter_api::Skills, Arc<dyn Adapter>)>,
    /// Definitions that are not the pinned ones (`[pinning]`), withheld or served.
    pub(super) unpinned: Vec<Unpinned>,
}

/// An item of the catalog, the adapter serving it and that adapter's configured name.
#[derive(Clone)]
pub(super) struct Owned<T> {
    pub(super) item: T,
    pub(super) adapter: Arc<dyn Adapter>,
    pub(super) by: Arc<str>,
}

/// Who a registry speaks as: `server.path`'s server or a virtual endpoint's.
pub(super) struct View<'a> {
    pub(super) info: &'a mcp_protocol::Implementation,
    pub(super) instructions: Option<&'a str>,
    pub(super) endpoint: Option<&'a str>,
    /// How its clients find its tools.
    pub(super) discovery: Discovery,
}

/// Every adapter's catalog, checked (unique names, schemas, `x-mcp-header` use, the tool
/// names other sections give); problems into `problems`.
pub(super) fn gather(config: &Config, adapters: &[NamedAdapter], problems: &mut Problems) -> Items {
    let mut items = Items::default();
    let mut validators = Validators::default();
    let mut tool_owner: HashMap<String, String> = HashMap::new();
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
    let mut pins = Checker::new(&config.pinning);
    for named in adapters {
        let NamedAdapter { name: adapter_name, adapter, user_auth, .. } = named;
        let catalog = adapter.catalog();
        let owner: Arc<str> = Arc::from(adapter_name.as_str());
        for spec in catalog.tools {
            let name = spec.tool.name.clone();
            let key = format!("adapters.{adapter_name}.tools.{name}");
            if !pins.admit(named, "tool", &name, &spec.tool) {
                // Withheld, still this adapter's tool for the sections that name it: a policy
                // or limit on it must not make the whole catalog refused (the old one, with
                // the changed definition served, would keep serving).
                tool_owner.insert(name, adapter_name.clone());
                continue;
            }
            if !claim("tool", &name, adapter_name, problems) {
                continue;
            }
            if !Tool::valid_name(&name) {
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
            let (Ok(validator), Ok(output_validator), Ok(header_params)) = (validator, output_validator, header_params)
            else {
                continue;
            };
            let mut policy = spec.policy;
            if let Some(o) = config.tool_policies.get(&name) {
                o.apply_to(&mut policy);
            }
            tool_owner.insert(name.clone(), adapter_name.clone());
            items.tools.push(Arc::new(ToolEntry {
                tool: spec.tool,
                policy,
                arguments: spec.arguments,
                adapter: Arc::clone(adapter),
                adapter_name: Arc::clone(&owner),
                validator,
                output_validator,
                header_params,
                limits: config.rate_limits.tools.get(&name).copied().unwrap_or(config.rate_limits.default),
                origin: None,
                user_auth: user_auth.clone(),
            }));
        }
        for r in catalog.resources {
            if pins.admit(named, "resource", &r.uri, &r) && claim("resource", &r.uri, adapter_name, problems) {
                items.resources.push(Owned { item: r, adapter: Arc::clone(adapter), by: Arc::clone(&owner) });
            }
        }
        for t in catalog.resource_templates {
            if !pins.admit(named, "template", &t.uri_template, &t)
                || !claim("resource template", &t.uri_template, adapter_name, problems)
            {
                continue;
            }
            match UriTemplate::parse(&t.uri_template) {
                Ok(parsed) => items.templates.push(Owned {
                    item: (t, parsed),
                    adapter: Arc::clone(adapter),
                    by: Arc::clone(&owner),
                }),
                Err(p) => problems.add(format!("adapters.{adapter_name}.resource_templates"), p),
            }
        }
        for p in catalog.prompts {
            if pins.admit(named, "prompt", &p.name, &p) && claim("prompt", &p.name, adapter_name, problems) {
                items.prompts.push(Owned { item: p, adapter: Arc::clone(adapter), by: Arc::clone(&owner) });
            }
        }
        if let Some(s) = catalog.skills {
            items.skills.push((Arc::clone(&owner), s, Arc::clone(adapter)));
        }
    }
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
        for t in items.tools.iter().filter(|t| search::is_search_tool(&t.tool.name)) {
            problems.add(
                format!("adapters.{}.tools.{}", t.adapter_name, t.tool.name),
                "this name is one of the three tools of [discovery] mode = \"search\"; rename the tool",
            );
        }
    }
    items.unpinned = pins.found;
    items
}

/// A registry serving `items` as `view` (pages, `server/discover`, the search index).
pub(super) fn assemble(
    config: &Config,
    view: &View<'_>,
    items: Items,
    sources: Arc<(Config, Vec<NamedAdapter>)>,
    endpoints: Vec<Arc<Registry>>,
) -> Result<Registry, ConfigError> {
    let server_info = ServerInfo::new(view.info);
    let page_size = config.server.page_size;
    let Items { tools, resources, templates, prompts, skills, unpinned } = items;
    let mut problems = Problems::new();
    let skill_sources: Vec<(&str, mcp_adapter_api::Skills, Arc<dyn Adapter>)> =
        skills.iter().map(|(a, s, ad)| (&**a, s.clone(), Arc::clone(ad))).collect();
    let skills = skills::SkillIndex::build(&skill_sources, &config.caching, &server_info, page_size, &mut problems);
    if !problems.is_empty() {
        return Err(ConfigError::Invalid(problems));
    }
    let search = match view.discovery {
        Discovery::List => None,
        Discovery::Search { results } => Some(search::SearchIndex::build(&tools, results).map_err(|e| {
            ConfigError::invalid("discovery.mode", format!("the tool search index could not be built: {e}"))
        })?),
    };
    // Lists keep configuration order (adapters in file order, each catalog in its own
    // order): deterministic across requests and replicas (MCP 2026-07-28 server/tools), and
    // under the operator's control, e.g. to put the most useful tools first.
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
    let resource_defs: Vec<&Resource> = resources.iter().map(|r| &r.item).collect();
    let resource_pages = Pages::build(
        &resource_defs,
        resource_defs.iter().map(|r| r.uri.as_str()),
        page_size,
        page_renderer("resources", caching.resources_list, info),
    );
    let template_defs: Vec<&ResourceTemplate> = templates.iter().map(|t| &t.item.0).collect();
    let template_pages = Pages::build(
        &template_defs,
        template_defs.iter().map(|t| t.uri_template.as_str()),
        page_size,
        page_renderer("resourceTemplates", caching.resource_templates_list, info),
    );
    let prompt_defs: Vec<&Prompt> = prompts.iter().map(|p| &p.item).collect();
    let prompt_pages = Pages::build(
        &prompt_defs,
        prompt_defs.iter().map(|p| p.name.as_str()),
        page_size,
        page_renderer("prompts", caching.prompts_list, info),
    );
    let discover = render_discover(config, view.instructions, capabilities, &server_info);
    Ok(Registry {
        discover,
        card: None,
        capabilities,
        caching,
        call_timeout: config.server.call_timeout,
        search,
        tools: tools.into_iter().map(|t| (t.tool.name.clone(), t)).collect(),
        tool_pages,
        resources: resources.into_iter().map(|r| (r.item.uri, r.adapter)).collect(),
        resource_pages,
        templates: templates.into_iter().map(|t| (t.item.1, t.adapter)).collect(),
        template_pages,
        prompts: prompts.into_iter().map(|p| (p.item.name.clone(), (p.item, p.adapter))).collect(),
        prompt_pages,
        skills,
        server_info,
        endpoint: view.endpoint.map(Arc::from),
        endpoints,
        unpinned: unpinned.into(),
        sources,
    })
}
