//! The upstream's lists as we offer them: fetched page by page, filtered by `allow`/`deny`,
//! renamed under the prefix, and kept as one [`View`] that calls read without locks. A tool
//! the registry would refuse (a name outside `[A-Za-z0-9_.-]{1,128}`, an input schema that is
//! not JSON Schema) is left out with a warning rather than breaking the whole catalog.

use std::collections::HashMap;

use mcp_adapter_api::protocol::skills::Skill;
use mcp_adapter_api::protocol::{Prompt, Resource, ResourceTemplate, Tool};
use mcp_adapter_api::{ArgumentCheck, Catalog, Skills, ToolSpec};
use serde_json::Value;

/// Which upstream names are offered, and under which names.
#[derive(Debug, Clone)]
pub struct Naming {
    /// Put before every name.
    pub prefix: String,
    /// Globs of names to offer (empty: all).
    pub allow: Vec<String>,
    /// Globs of names to leave out.
    pub deny: Vec<String>,
}

impl Naming {
    /// True when `name` (the upstream's) is offered.
    pub fn offers(&self, name: &str) -> bool {
        (self.allow.is_empty() || self.allow.iter().any(|g| glob(g, name))) && !self.deny.iter().any(|g| glob(g, name))
    }

    fn ours(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}

/// The upstream's lists as fetched (one entry per page item that parsed).
#[derive(Debug, Default)]
pub struct Lists {
    /// `tools/list`.
    pub tools: Vec<Tool>,
    /// `resources/list`.
    pub resources: Vec<Resource>,
    /// `resources/templates/list`.
    pub templates: Vec<ResourceTemplate>,
    /// `prompts/list`.
    pub prompts: Vec<Prompt>,
    /// `skills/list`, when the upstream declares the skills extension (SEP-2640).
    pub skills: Option<Vec<Skill>>,
}

/// A tool as the upstream knows it.
#[derive(Debug, Clone)]
pub struct UpstreamTool {
    /// Its name upstream.
    pub name: String,
    /// `(header name, argument)` of its `x-mcp-header` arguments (MCP 2026-07-28
    /// basic/transports/streamable-http § Request metadata headers), sent as `Mcp-Param-*`.
    pub param_headers: Vec<(String, String)>,
}

/// What calls read: the catalog we offer and our names mapped back to the upstream's.
#[derive(Debug, Default)]
pub struct View {
    /// Offered to the registry.
    pub catalog: Catalog,
    /// Our tool name → the upstream tool.
    pub tools: HashMap<String, UpstreamTool>,
    /// Our prompt name → the upstream's.
    pub prompts: HashMap<String, String>,
    /// A digest of what is offered, to tell whether a refresh changed anything.
    pub fingerprint: String,
}

impl View {
    /// Builds the view of `lists` under `naming`.
    pub fn build(lists: Lists, naming: &Naming, label: &str) -> Self {
        let mut view = View::default();
        for mut tool in lists.tools {
            if !naming.offers(&tool.name) {
                continue;
            }
            let ours = naming.ours(&tool.name);
            if !valid_tool_name(&ours) || view.tools.contains_key(&ours) {
                tracing::warn!(upstream = label, tool = %tool.name, "left out: the name is not a valid tool name (A-Z a-z 0-9 _ - ., at most 128) or is used twice");
                continue;
            }
            if let Err(e) = jsonschema::validator_for(&tool.input_schema) {
                tracing::warn!(upstream = label, tool = %tool.name, error = %e, "left out: its inputSchema is not a valid JSON Schema");
                continue;
            }
            let upstream = UpstreamTool { param_headers: param_headers(&tool.input_schema), name: tool.name.clone() };
            tool.name = ours.clone();
            view.tools.insert(ours, upstream);
            // The schema is the upstream's: so is the answer to arguments that fail it (a
            // result with `isError: true`, MCP 2025-11-25 server/tools § Error Handling).
            view.catalog.tools.push(ToolSpec { arguments: ArgumentCheck::Backend, ..ToolSpec::new(tool) });
        }
        for mut r in lists.resources.into_iter().filter(|r| naming.offers(&r.name)) {
            r.name = naming.ours(&r.name);
            view.catalog.resources.push(r);
        }
        for mut t in lists.templates.into_iter().filter(|t| naming.offers(&t.name)) {
            t.name = naming.ours(&t.name);
            view.catalog.resource_templates.push(t);
        }
        for mut p in lists.prompts.into_iter().filter(|p| naming.offers(&p.name)) {
            let ours = naming.ours(&p.name);
            view.prompts.insert(ours.clone(), std::mem::replace(&mut p.name, ours));
            view.catalog.prompts.push(p);
        }
        // Skills pass through as the upstream serves them: their URIs, names (a skill's name
        // is its directory's) and digests are its own; `allow`/`deny` select them by name.
        view.catalog.skills = lists
            .skills
            .map(|skills| Skills::from_manifests(skills.into_iter().filter(|s| naming.offers(s.name())).collect()));
        let c = &view.catalog;
        let tools: Vec<&Tool> = c.tools.iter().map(|t| &t.tool).collect();
        let skills = c.skills.as_ref().map(|s| &s.entries);
        view.fingerprint = serde_json::json!([tools, c.resources, c.resource_templates, c.prompts, skills]).to_string();
        view
    }
}

/// Top-level properties marked `x-mcp-header`.
fn param_headers(schema: &Value) -> Vec<(String, String)> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return Vec::new() };
    props.iter().filter_map(|(prop, s)| Some((s.get("x-mcp-header")?.as_str()?.to_owned(), prop.clone()))).collect()
}

/// `[A-Za-z0-9_.-]{1,128}` (MCP 2026-07-28 server/tools § Tool names).
fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

/// `*` matches any run of characters (none included); everything else matches itself.
pub fn glob(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn globs() {
        assert!(
            glob("*", "anything") && glob("get-*", "get-sum") && glob("*sum", "get-sum") && glob("g*t*m", "get-sum")
        );
        assert!(!glob("get-*", "echo") && !glob("echo", "echo2") && glob("", ""));
    }

    fn tool(name: &str, schema: Value) -> Tool {
        serde_json::from_value(json!({"name": name, "inputSchema": schema})).unwrap()
    }

    #[test]
    fn filters_prefixes_and_maps_back() {
        let lists = Lists {
            tools: vec![
                tool(
                    "echo",
                    json!({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}),
                ),
                tool("get-sum", json!({"type":"object"})),
                tool("bad name", json!({"type":"object"})),
                tool("broken", json!({"type": 12})),
                tool("secret", json!({"type":"object"})),
            ],
            prompts: vec![serde_json::from_value(json!({"name":"simple"})).unwrap()],
            ..Lists::default()
        };
        let naming = Naming { prefix: "ev_".into(), allow: vec![], deny: vec!["sec*".into()] };
        let view = View::build(lists, &naming, "test");
        let names: Vec<&str> = view.catalog.tools.iter().map(|t| t.tool.name.as_str()).collect();
        assert_eq!(names, ["ev_echo", "ev_get-sum"]);
        assert_eq!(view.tools["ev_echo"].name, "echo");
        assert!(
            view.catalog.tools.iter().all(|t| t.arguments == ArgumentCheck::Backend),
            "the upstream checks its own arguments"
        );
        assert_eq!(view.tools["ev_echo"].param_headers, [("Region".to_owned(), "region".to_owned())]);
        assert_eq!(view.prompts["ev_simple"], "simple");
        assert_eq!(view.catalog.prompts[0].name, "ev_simple");
        let only = Naming { prefix: String::new(), allow: vec!["get-*".into()], deny: vec![] };
        assert!(only.offers("get-sum") && !only.offers("echo"));
    }
}
