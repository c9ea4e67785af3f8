//! Request-metadata headers of the Streamable HTTP binding (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers).

use base64::Engine as _;

/// Every POST: the protocol revision, equal to the body's envelope version.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// Every request: the JSON-RPC `method`.
pub const METHOD: &str = "mcp-method";
/// `tools/call`, `prompts/get` (`params.name`), `resources/read` (`params.uri`) and the
/// `tasks/*` methods (`params.taskId`).
pub const NAME: &str = "mcp-name";
/// Prefix of the headers that mirror tool arguments annotated with `x-mcp-header`.
pub const PARAM_PREFIX: &str = "mcp-param-";
/// The JSON Schema keyword that names an argument's mirror header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// Why a header value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SentinelError {
    /// The text between `=?base64?` and `?=` is not valid padded Base64.
    InvalidBase64,
    /// The decoded bytes are not UTF-8.
    InvalidUtf8,
}

impl std::fmt::Display for SentinelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::InvalidBase64 => "its =?base64?...?= value is not valid Base64",
            Self::InvalidUtf8 => "its =?base64?...?= value does not decode to UTF-8",
        })
    }
}

/// Decodes a header value for comparison with the body (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers):
/// optional whitespace (SP/HTAB) around the value is trimmed; a value shaped exactly
/// `=?base64?<b64>?=` (case-sensitive) is Base64-decoded; anything else is taken literally.
pub fn decode_value(raw: &str) -> Result<std::borrow::Cow<'_, str>, SentinelError> {
    let value = raw.trim_matches([' ', '\t']);
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        Some(encoded) => {
            let bytes =
                base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|_| SentinelError::InvalidBase64)?;
            String::from_utf8(bytes).map(std::borrow::Cow::Owned).map_err(|_| SentinelError::InvalidUtf8)
        }
        None => Ok(std::borrow::Cow::Borrowed(value)),
    }
}

/// Encodes a value for a header the way clients must (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers): literal when it is
/// visible ASCII without surrounding whitespace and does not look like a sentinel,
/// otherwise `=?base64?...?=`.
pub fn encode_value(value: &str) -> String {
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
        && !value.starts_with("=?base64?");
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(value))
    }
}

/// True when `name` is an HTTP token (`1*tchar`, RFC 9110 §5.6.2): the rule for
/// `x-mcp-header` values.
pub fn is_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_values_are_trimmed_not_decoded() {
        assert_eq!(decode_value("  foo \t").unwrap(), "foo");
        // wrong case or missing suffix: literal (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers)
        assert_eq!(decode_value("=?BASE64?Zm9v?=").unwrap(), "=?BASE64?Zm9v?=");
        assert_eq!(decode_value("=?base64?Zm9v").unwrap(), "=?base64?Zm9v");
    }

    #[test]
    fn sentinel_values_are_decoded() {
        assert_eq!(decode_value("=?base64?Zm9v?=").unwrap(), "foo");
        assert_eq!(decode_value("=?base64?w6lsw6h2ZQ==?=").unwrap(), "élève");
        assert_eq!(decode_value("=?base64?Zm9v!?="), Err(SentinelError::InvalidBase64));
        assert_eq!(decode_value("=?base64?Zm9?="), Err(SentinelError::InvalidBase64));
        assert_eq!(decode_value("=?base64?/w==?="), Err(SentinelError::InvalidUtf8));
    }

    #[test]
    fn encode_round_trips() {
        for v in ["foo", " padded ", "élève", "=?base64?x?=", "line\nbreak", ""] {
            assert_eq!(decode_value(&encode_value(v)).unwrap(), v);
        }
        assert_eq!(encode_value("plain-value"), "plain-value");
    }

    #[test]
    fn tokens() {
        assert!(is_token("Region"));
        assert!(is_token("X-Trace_id.1"));
        assert!(!is_token(""));
        assert!(!is_token("has space"));
        assert!(!is_token("a:b"));
    }
}
