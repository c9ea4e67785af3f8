//! Request metadata headers as the body's checks read them (MCP 2026-07-28
//! basic/transports/streamable-http § Request metadata headers): one copy at most, visible
//! ASCII, Base64 sentinel decoded.

use std::borrow::Cow;

use axum::http::{HeaderMap, HeaderName};
use mcp_protocol::headers::{self, SentinelError};

use super::RpcError;

/// `MCP-Protocol-Version`, as a name looked up without parsing it again on every request.
pub const PROTOCOL_VERSION: HeaderName = HeaderName::from_static(headers::PROTOCOL_VERSION);
/// `Mcp-Method`.
pub const METHOD: HeaderName = HeaderName::from_static(headers::METHOD);
/// `Mcp-Name`.
pub const NAME: HeaderName = HeaderName::from_static(headers::NAME);

/// Decodes a header value (trim, Base64 sentinel) or explains why it cannot be.
pub fn decode<'a>(raw: &'a str, name: &str) -> Result<Cow<'a, str>, RpcError> {
    headers::decode_value(raw).map_err(|e: SentinelError| {
        RpcError::header_mismatch(format!("Header mismatch: {name} header is invalid: {e}"))
    })
}

/// One header value: absent, or exactly one copy of visible ASCII (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers: duplicates
/// rejected (our choice), since first- and last-copy readers would disagree).
pub fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, RpcError> {
    let mut all = headers.get_all(name).iter();
    let Some(first) = all.next() else {
        return Ok(None);
    };
    if all.next().is_some() {
        return Err(RpcError::header_mismatch(format!("Header mismatch: the {name} header appears more than once")));
    }
    first.to_str().map(Some).map_err(|_| {
        RpcError::header_mismatch(format!(
            "Header mismatch: the {name} header has characters outside visible ASCII; send such values as =?base64?...?="
        ))
    })
}
