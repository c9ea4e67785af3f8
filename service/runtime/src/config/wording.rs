//! serde's words for a value that does not fit, in the words of a config file: `expected u64`
//! is `expected a whole number (0 or more)`, a `sequence` an array, a `map` a table; and a
//! number or a boolean written in quotes gets the fix (`timeout_ms = 5000`, not `"5000"`),
//! the commonest type error there is; and a key written in another config's word for a key
//! this one names otherwise (`command` for a CLI tool's `executable`) is named as that key.

/// `message` with serde's type names as a config file's reader knows them.
pub fn plain(message: &str) -> String {
    const NAMES: [(&str, &str); 16] = [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected u32", "expected a whole number (0 or more)"),
        ("expected u64", "expected a whole number (0 or more)"),
        ("expected usize", "expected a whole number (0 or more)"),
        ("expected i32", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected isize", "expected a whole number"),
        ("expected f32", "expected a number"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected a table"),
        ("invalid type: sequence", "invalid type: array"),
        ("invalid type: map", "invalid type: table"),
        ("expected a borrowed string", "expected a string"),
        ("expected a boolean", "expected true or false"),
    ];
    let mut out = message.to_owned();
    for (serde, ours) in NAMES {
        if let Some(at) = out.find(serde)
            && !out[at + serde.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            out.replace_range(at..at + serde.len(), ours);
        }
    }
    out
}

/// Words people write for a key of ours, from another config they know: `(our key, their
/// words, what to add)`. `command` is the `mcp` adapter's word and every MCP client's.
const STAND_INS: &[(&str, &[&str], &str)] =
    &[("executable", &["command", "cmd", "program"], "`command` is the `mcp` adapter's word")];

/// The key among `written` that stands for the missing `key`, and what to say about it.
pub fn stand_in<'w>(key: &str, written: &'w [String]) -> Option<(&'w str, &'static str)> {
    let (_, words, note) = STAND_INS.iter().find(|(ours, _, _)| *ours == key)?;
    written.iter().find(|w| words.contains(&w.as_str())).map(|w| (w.as_str(), *note))
}

/// The fix for a number or a boolean written as a string: `write it without quotes: key = 5000`.
pub fn unquote(message: &str, key: &str) -> Option<String> {
    let rest = message.strip_prefix("invalid type: string \"")?;
    let (text, expected) = rest.split_once("\", expected ")?;
    let fits = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => text.parse::<u64>().is_ok(),
        "i32" | "i64" | "isize" => text.parse::<i64>().is_ok(),
        "f32" | "f64" => text.parse::<f64>().is_ok_and(f64::is_finite),
        "a boolean" => matches!(text, "true" | "false"),
        _ => false,
    };
    fits.then(|| format!("write it without quotes: `{key} = {text}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names_become_the_config_files() {
        assert_eq!(
            plain("invalid type: string \"5000\", expected u64"),
            "invalid type: string \"5000\", expected a whole number (0 or more)"
        );
        assert_eq!(
            plain("invalid type: string \"x\", expected a sequence"),
            "invalid type: string \"x\", expected an array"
        );
        assert_eq!(plain("invalid type: map, expected a string"), "invalid type: table, expected a string");
        // Only whole words: `expected u8` is not inside `expected u80`.
        assert_eq!(plain("expected u80 or so"), "expected u80 or so");
    }

    #[test]
    fn a_quoted_number_or_boolean_gets_the_fix() {
        let m = "invalid type: string \"5000\", expected u64";
        assert_eq!(unquote(m, "timeout_ms").as_deref(), Some("write it without quotes: `timeout_ms = 5000`"));
        assert_eq!(
            unquote("invalid type: string \"true\", expected a boolean", "read_only").as_deref(),
            Some("write it without quotes: `read_only = true`")
        );
        assert_eq!(unquote("invalid type: string \"five\", expected u64", "n"), None);
        assert_eq!(unquote("invalid type: string \"-1\", expected u64", "n"), None);
        assert_eq!(unquote("invalid type: integer `5`, expected a string", "n"), None);
    }
}
