//! What a virtual endpoint (`[[endpoints]]`) serves: its selection of the catalog, each tool as
//! the endpoint's overrides make it look (name, title, description, annotations, fixed
//! arguments), checked against the catalog. The endpoint's registry is then assembled from
//! these items exactly as the main one is (pages, discover, search index), once per load: a
//! request on an endpoint costs what one on `server.path` costs.

use std::sync::Arc;

use mcp_adapter_api::{ConfigProblem, Problems};
use mcp_protocol::Tool;
use serde_json::{Map, Value};

use super::ToolEntry;
use super::build::Items;
use crate::config::Discovery;
use crate::config::endpoints::{Endpoint, ToolOverride};

/// Where an endpoint's tool comes from when the endpoint renamed it or fixed arguments.
#[derive(Debug)]
pub struct Origin {
    /// Its name in the catalog: what the adapter, the access rules, the rate limits and the
    /// metrics know it by.
    pub name: String,
    /// Arguments the endpoint always sends.
    pub fixed: Map<String, Value>,
}

impl Origin {
    /// Adds the fixed arguments to a client's `arguments`; a client that sends one of them
    /// is refused (it is not in the schema it was shown).
    pub fn fix(&self, arguments: &mut Map<String, Value>) -> Result<(), String> {
        if let Some(k) = self.fixed.keys().find(|k| arguments.contains_key(*k)) {
            return Err(format!("argument '{k}' is fixed on this endpoint: leave it out"));
        }
        arguments.extend(self.fixed.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(())
    }
}

/// The items of `all` that `endpoint` serves, overridden; every problem keyed under its
/// `endpoints[index]`. `complete`: every configured adapter is in `all` (else an override
/// may name a tool of one that was not built, and is not checked).
pub(super) fn select(endpoint: &Endpoint, all: &Items, complete: bool, problems: &mut Problems) -> Items {
    let key = |k: &str| format!("endpoints[{}].{k}", endpoint.index);
    let mut tools = Vec::new();
    for entry in &all.tools {
        let name = entry.tool.name.as_str();
        let chosen = endpoint.selects(&entry.adapter_name, name)
            && endpoint
                .annotations_match(entry.tool.annotations.as_ref().and_then(|a| serde_json::to_value(a).ok()).as_ref());
        match endpoint.tools.get(name) {
            Some(_) if !chosen => problems.add(
                key(&format!("tools.{name}")),
                format!(
                    "this endpoint does not serve '{name}' (its adapters, include, exclude or annotations leave it out); select it or remove the override"
                ),
            ),
            Some(o) => match derive(entry, o) {
                Ok(derived) => tools.push(Arc::new(derived)),
                Err(p) => problems.extend(p.under(&key(&format!("tools.{name}")))),
            },
            None if chosen => tools.push(Arc::clone(entry)),
            None => {}
        }
    }
    // A tool withheld by its pin is no mistake of the file: the override waits for it.
    let withheld = |n: &str| all.unpinned.iter().any(|u| u.withheld && u.item.0 == "tool" && u.item.1 == n);
    let unknown =
        endpoint.tools.keys().filter(|n| complete && !withheld(n) && !all.tools.iter().any(|t| &t.tool.name == *n));
    for name in unknown {
        let problem =
            ConfigProblem::new(key(&format!("tools.{name}")), "no adapter provides a tool with this name").at_key();
        problems.push(match mcp_adapter_api::closest(name, all.tools.iter().map(|t| t.tool.name.as_str())) {
            Some(near) => problem.help(format!("did you mean `{near}`?")),
            None => problem,
        });
    }
    let mut seen = std::collections::HashMap::new();
    for t in &tools {
        if let Some(prev) = seen.insert(t.tool.name.as_str(), t.catalog_name()) {
            problems.add(
                key("tools"),
                format!(
                    "two tools are named '{}' on this endpoint ('{prev}' and '{}'); rename one",
                    t.tool.name,
                    t.catalog_name()
                ),
            );
        }
    }
    if endpoint.discovery != Discovery::List {
        for t in tools.iter().filter(|t| super::search::is_search_tool(&t.tool.name)) {
            problems.add(
                key("discovery"),
                format!(
                    "'{}' is one of the three tools of discovery = \"search\"; rename it on this endpoint ([endpoints.tools.{}] name) or leave it out",
                    t.tool.name,
                    t.catalog_name()
                ),
            );
        }
    }
    let picks = |adapter: &str, name: &str| endpoint.selects(adapter, name);
    Items {
        tools,
        resources: all.resources.iter().filter(|r| picks(&r.by, &r.item.uri)).cloned().collect(),
        templates: all.templates.iter().filter(|t| picks(&t.by, &t.item.0.uri_template)).cloned().collect(),
        prompts: all.prompts.iter().filter(|p| picks(&p.by, &p.item.name)).cloned().collect(),
        skills: all
            .skills
            .iter()
            .filter(|s| endpoint.adapters.as_ref().is_none_or(|a| a.iter().any(|a| *a == *s.0)))
            .cloned()
            .collect(),
        unpinned: Vec::new(),
    }
}

/// The tool `entry` as `o` makes it look.
fn derive(entry: &ToolEntry, o: &ToolOverride) -> Result<ToolEntry, Problems> {
    let mut problems = Problems::new();
    let mut tool: Tool = entry.tool.clone();
    if let Some(name) = o.name.as_ref().filter(|n| Tool::valid_name(n)) {
        tool.name.clone_from(name);
    }
    if let Some(t) = &o.title {
        tool.title = Some(t.clone());
    }
    if let Some(d) = &o.description {
        tool.description = Some(d.clone());
    }
    if let Some(set) = &o.annotations {
        let mut annotations = match tool.annotations.take().map(serde_json::to_value) {
            Some(Ok(Value::Object(m))) => m,
            _ => Map::new(),
        };
        annotations.extend(set.iter().map(|(k, v)| (k.clone(), v.clone())));
        // The keys and value types were checked with the file.
        tool.annotations = serde_json::from_value(Value::Object(annotations)).ok();
    }
    if !o.arguments.is_empty() {
        let properties = entry.tool.input_schema.get("properties").and_then(Value::as_object);
        for (arg, value) in &o.arguments {
            let Some(schema) = properties.and_then(|p| p.get(arg)) else {
                let known: Vec<&str> = properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                problems.add(
                    format!("arguments.{arg}"),
                    format!("'{arg}' is not a parameter of this tool (its parameters: {})", list(&known)),
                );
                continue;
            };
            if let Err(why) = super::tool_schema::check_value(&entry.tool.input_schema, schema, value) {
                problems.add(format!("arguments.{arg}"), format!("{value} does not fit the parameter's schema: {why}"));
            }
        }
        tool.input_schema = Arc::new(without(&entry.tool.input_schema, &o.arguments));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let fixed = |name: &str| o.arguments.contains_key(name);
    Ok(ToolEntry {
        tool,
        policy: entry.policy.clone(),
        arguments: entry.arguments,
        adapter: Arc::clone(&entry.adapter),
        adapter_name: Arc::clone(&entry.adapter_name),
        validator: Arc::clone(&entry.validator),
        output_validator: entry.output_validator.clone(),
        header_params: entry.header_params.iter().filter(|h| !fixed(&h.property)).cloned().collect(),
        limits: entry.limits,
        origin: Some(Arc::new(Origin { name: entry.catalog_name().to_owned(), fixed: o.arguments.clone() })),
        user_auth: entry.user_auth.clone(),
    })
}

/// `schema` without the properties in `fixed` (nor in its `required`).
fn without(schema: &Value, fixed: &Map<String, Value>) -> Value {
    let mut out = schema.clone();
    if let Some(p) = out.get_mut("properties").and_then(Value::as_object_mut) {
        p.retain(|k, _| !fixed.contains_key(k));
    }
    if let Some(r) = out.get_mut("required").and_then(Value::as_array_mut) {
        r.retain(|k| k.as_str().is_none_or(|k| !fixed.contains_key(k)));
    }
    out
}

fn list(names: &[&str]) -> String {
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}
