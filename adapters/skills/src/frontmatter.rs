//! `SKILL.md`: the YAML frontmatter between its `---` lines, rendered as JSON, and the Agent
//! Skills rules on its fields (agentskills.io/specification § Frontmatter; SEP-2640 § Skill
//! Format). Every problem says what is wrong and how to fix it; the caller adds the file.

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde_json::{Map, Number, Value};

/// Longest `name` (agentskills.io/specification § name field).
const MAX_NAME: usize = 64;
/// Longest `description`, in characters.
const MAX_DESCRIPTION: usize = 1024;
/// Longest `compatibility`, in characters.
const MAX_COMPATIBILITY: usize = 500;

/// The frontmatter of a `SKILL.md`, checked: a mapping with a valid `name` and a
/// `description`. `Err` is one line for a person (line numbers count from the file's first).
pub fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let yaml = split(text)?;
    let docs = Yaml::load_from_str(yaml).map_err(|e| {
        // The YAML starts on the file's second line (after `---`).
        let m = e.marker();
        format!("line {}, column {}: invalid YAML: {}", m.line() + 1, m.col() + 1, e.info())
    })?;
    let Some(Yaml::Mapping(map)) = docs.into_iter().next() else {
        return Err("the frontmatter must be a mapping of keys to values (`name: ...`, `description: ...`)".into());
    };
    let mut out = Map::new();
    for (k, v) in &map {
        let key = match k {
            Yaml::Value(Scalar::String(s)) => s.to_string(),
            _ => return Err(format!("frontmatter key {k:?} is not a string: quote it")),
        };
        let value = json(v).map_err(|e| format!("frontmatter `{key}`: {e}"))?;
        out.insert(key, value);
    }
    check(&out)?;
    Ok(out)
}

/// The YAML between the opening `---` line and the closing one (a BOM and CRLFs allowed).
fn split(text: &str) -> Result<&str, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")).ok_or(
        "missing frontmatter: SKILL.md must begin with a `---` line, then `name:` and `description:`, then `---`",
    )?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']) == "---" {
            return Ok(&rest[..at]);
        }
        at += line.len();
    }
    Err("the frontmatter has no closing `---` line".into())
}

/// A YAML node as JSON: anchors, aliases and tags are refused (a host's verifier may not
/// resolve them alike, and the entry must equal what it parses).
fn json(node: &Yaml<'_>) -> Result<Value, String> {
    Ok(match node {
        Yaml::Value(Scalar::Null) => Value::Null,
        Yaml::Value(Scalar::Boolean(b)) => Value::Bool(*b),
        Yaml::Value(Scalar::Integer(i)) => Value::from(*i),
        Yaml::Value(Scalar::FloatingPoint(f)) => Number::from_f64(f.into_inner())
            .map(Value::Number)
            .ok_or("infinity and NaN cannot be represented in JSON: quote the value")?,
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Value::String(s.to_string()),
        Yaml::Sequence(items) => Value::Array(items.iter().map(json).collect::<Result<_, _>>()?),
        Yaml::Mapping(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let Yaml::Value(Scalar::String(key)) = k else {
                    return Err(format!("key {k:?} is not a string: quote it"));
                };
                out.insert(key.to_string(), json(v)?);
            }
            Value::Object(out)
        }
        Yaml::Alias(_) => return Err("anchors and aliases are not supported: write the value out".into()),
        Yaml::Tagged(..) => return Err("tags are not supported: write the plain value".into()),
        Yaml::BadValue => return Err("not a value".into()),
    })
}

/// The Agent Skills rules the TypeScript SDK's verifier also applies (so a served entry is
/// one every conforming host accepts).
fn check(fm: &Map<String, Value>) -> Result<(), String> {
    let name = match fm.get("name") {
        Some(Value::String(n)) => n,
        Some(_) => return Err("`name` must be a string".into()),
        None => return Err("`name` is missing: add `name: <the directory's name>`".into()),
    };
    if !valid_name(name) {
        return Err(format!(
            "`name: {name}` is not a valid skill name: 1-{MAX_NAME} lowercase letters, digits and single hyphens, \
             no leading or trailing hyphen (and so no `/`, `.` or `..`)"
        ));
    }
    match fm.get("description") {
        Some(Value::String(d)) if !d.trim().is_empty() && d.chars().count() <= MAX_DESCRIPTION => {}
        Some(Value::String(_)) => return Err(format!("`description` must be 1-{MAX_DESCRIPTION} characters")),
        Some(_) => return Err("`description` must be a string".into()),
        None => {
            return Err("`description` is missing: add `description: <what the skill does and when to use it>`".into());
        }
    }
    if let Some(c) = fm.get("compatibility")
        && !c.as_str().is_some_and(|c| !c.is_empty() && c.chars().count() <= MAX_COMPATIBILITY)
    {
        return Err(format!("`compatibility` must be a string of 1-{MAX_COMPATIBILITY} characters"));
    }
    if let Some(m) = fm.get("metadata")
        && !m.as_object().is_some_and(|m| m.values().all(Value::is_string))
    {
        return Err("`metadata` must map keys to string values (quote numbers and booleans)".into());
    }
    Ok(())
}

/// A skill name: `[a-z0-9]+(-[a-z0-9]+)*`, at most 64 characters (agentskills.io/specification
/// § name field; SEP-2640 § Resource Mapping).
pub fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .split('-')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn renders_the_frontmatter_verbatim_as_json() {
        let fm = parse(
            "---\nname: pdf-processing\ndescription: Extract, fill PDFs\nlicense: Apache-2.0\n\
             metadata:\n  version: \"2.1\"\nallowed-tools: [Read, Bash]\n---\n# Body\n",
        )
        .unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "pdf-processing", "description": "Extract, fill PDFs", "license": "Apache-2.0",
                   "metadata": {"version": "2.1"}, "allowed-tools": ["Read", "Bash"]})
        );
        assert!(parse("\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\n").is_ok());
    }

    #[test]
    fn says_what_is_wrong() {
        let e = |t: &str| parse(t).unwrap_err();
        assert!(e("# no frontmatter\n").starts_with("missing frontmatter"));
        assert!(e("---\nname: a\n").contains("no closing"));
        assert!(e("---\ndescription: d\n---\n").contains("`name` is missing"));
        assert!(e("---\nname: a\n---\n").contains("`description` is missing"));
        for bad in ["../evil", "a/b", "Upper", "-a", "a--b", "a.b", ""] {
            assert!(
                e(&format!("---\nname: \"{bad}\"\ndescription: d\n---\n")).contains("not a valid skill name"),
                "{bad}"
            );
        }
        assert!(e("---\nname: a\ndescription: d\nmetadata:\n  v: 2\n---\n").contains("string values"));
        assert!(e("---\nname: [a\n---\n").starts_with("line "), "{}", e("---\nname: [a\n---\n"));
        assert!(e("---\n- a\n---\n").contains("mapping"));
    }
}
