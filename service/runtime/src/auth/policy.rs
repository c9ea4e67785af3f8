//! Access rules per tool, prompt and resource: every required scope, and every claim
//! condition. An item without a rule is open to every authenticated caller.

use mcp_adapter_api::Identity;
use serde_json::Value;

use crate::config::{AccessRule, AccessRules};

/// Why a caller may not use an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// Every scope the item needs (a client asks for all of them when it steps up).
    pub required: Vec<String>,
    /// Those the caller's token lacks.
    pub missing: Vec<String>,
    /// The claim conditions the caller does not meet.
    pub claims: Vec<String>,
}

/// The rule of the item a method names (`tools/call` → tools, `prompts/get` → prompts,
/// `resources/read` → resources; `skills/get` → the resource rule of the skill's `SKILL.md`
/// URI), if any.
pub fn rule_for<'a>(rules: &'a AccessRules, method: &str, name: &str) -> Option<&'a AccessRule> {
    match method {
        "tools/call" => rules.tools.get(name),
        "prompts/get" => rules.prompts.get(name),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" | "skills/get" => rules.resources.get(name),
        _ => None,
    }
}

/// Whether `identity` meets `rule`. Without an identity (anonymous access) rules cannot be
/// met: a rule needs `[auth]`.
pub fn check(rule: &AccessRule, identity: Option<&Identity>) -> Result<(), Denied> {
    let (scopes, claims): (&[String], Option<&serde_json::Map<String, Value>>) = match identity {
        Some(i) => (&i.scopes, Some(&i.claims)),
        None => (&[], None),
    };
    let missing: Vec<String> = rule.scopes.iter().filter(|s| !scopes.contains(s)).cloned().collect();
    let failed: Vec<String> = rule
        .claims
        .iter()
        .filter(|(name, want)| !claims.and_then(|c| c.get(name.as_str())).is_some_and(|v| meets(v, want)))
        .map(|(name, want)| format!("{name}={want}"))
        .collect();
    if missing.is_empty() && failed.is_empty() {
        return Ok(());
    }
    Err(Denied { required: rule.scopes.clone(), missing, claims: failed })
}

/// A claim meets a condition when it equals the value or, being an array, contains it.
fn meets(claim: &Value, want: &str) -> bool {
    match claim {
        Value::String(s) => s == want,
        Value::Array(items) => items.iter().any(|i| i.as_str() == Some(want)),
        Value::Bool(b) => want == if *b { "true" } else { "false" },
        Value::Number(n) => n.to_string() == want,
        Value::Null | Value::Object(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(scopes: &[&str], claims: &[(&str, &str)]) -> AccessRule {
        AccessRule {
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            claims: claims.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    fn caller(scopes: &[&str], claims: Value) -> Identity {
        let Value::Object(claims) = claims else { panic!() };
        Identity::issued("https://idp", "ada", scopes.iter().map(|s| s.to_string()).collect(), claims)
    }

    #[test]
    fn names_every_required_scope_and_each_missing_one() {
        let r = rule(&["files:read", "files:write"], &[]);
        let denied = check(&r, Some(&caller(&["files:read"], serde_json::json!({})))).unwrap_err();
        assert_eq!(denied.required, ["files:read", "files:write"]);
        assert_eq!(denied.missing, ["files:write"]);
        assert!(check(&r, Some(&caller(&["files:write", "files:read", "x"], serde_json::json!({})))).is_ok());
        assert!(check(&r, None).is_err());
    }

    #[test]
    fn claim_conditions_match_values_and_array_members() {
        let r = rule(&[], &[("groups", "admins")]);
        assert!(check(&r, Some(&caller(&[], serde_json::json!({"groups": ["staff", "admins"]})))).is_ok());
        assert!(check(&r, Some(&caller(&[], serde_json::json!({"groups": "admins"})))).is_ok());
        let denied = check(&r, Some(&caller(&[], serde_json::json!({"groups": ["staff"]})))).unwrap_err();
        assert_eq!(denied.claims, ["groups=admins"]);
        assert!(check(&r, Some(&Identity::new("static"))).is_err());
    }
}
