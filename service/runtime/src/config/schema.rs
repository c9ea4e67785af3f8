//! The JSON Schema of the config file, derived from the raw config types (so every section
//! and adapter kind added there is in it), for editor completion and checking (taplo, Even
//! Better TOML). Shipped as `docs/config.schema.json`; a test keeps that file current.

use schemars::generate::SchemaSettings;

use super::raw::RawConfig;

/// The schema, JSON Schema draft 7 (what taplo and Even Better TOML read), pretty-printed.
pub fn json() -> String {
    let mut schema = SchemaSettings::draft07().into_generator().into_root_schema_for::<RawConfig>();
    schema.insert("title".into(), "mcp-runtime configuration".into());
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn the_shipped_schema_is_the_generated_one() {
        let shipped = std::fs::read_to_string(repo().join("docs/config.schema.json")).unwrap_or_default();
        assert!(
            shipped == super::json(),
            "docs/config.schema.json is stale: regenerate it with `cargo run -p mcp-runtime -- config-schema > docs/config.schema.json`"
        );
    }

    fn validator() -> jsonschema::Validator {
        let schema: serde_json::Value = serde_json::from_str(&super::json()).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    }

    #[test]
    fn every_shipped_config_is_valid_under_the_schema() {
        let validator = validator();
        let mut files =
            vec![repo().join("service/config/default.toml"), repo().join("service/config/conformance.toml")];
        for dir in ["service/config/examples", "loadtest/config"] {
            for entry in std::fs::read_dir(repo().join(dir)).unwrap() {
                files.push(entry.unwrap().path());
            }
        }
        for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "toml")) {
            let value: serde_json::Value = toml::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            let errors: Vec<String> =
                validator.iter_errors(&value).map(|e| format!("{}: {e}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{}:\n{}", file.display(), errors.join("\n"));
        }
    }

    #[test]
    fn the_schema_refuses_unknown_keys_and_wrong_types() {
        let validator = validator();
        for bad in ["[server]\nlistn = \"x\"", "[server]\npage_size = \"7\"", "[[adapters]]\nkind = \"clii\""] {
            let value: serde_json::Value = toml::from_str(bad).unwrap();
            assert!(!validator.is_valid(&value), "{bad}");
        }
    }
}
