//! Protocol revisions (MCP 2026-07-28 basic/versioning § Version negotiation): compared as exact strings.

/// The revision this runtime implements.
pub const LATEST: &str = "2026-07-28";

/// Revisions served through the per-request envelope. Only modern revisions can appear here:
/// a legacy revision cannot be used without the `initialize` handshake (MCP 2026-07-28 basic/versioning § Version negotiation, our choice where the spec leaves it open).
pub const SUPPORTED: &[&str] = &[LATEST];

/// Handshake-era revisions. A request naming one of these is a legacy client at a modern-only
/// server; we answer `-32022` naming [`SUPPORTED`] (MCP 2026-07-28 basic/versioning § Version negotiation; basic/transports/streamable-http § Backward compatibility).
pub const LEGACY: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// True when `version` is served by this runtime.
pub fn is_supported(version: &str) -> bool {
    SUPPORTED.contains(&version)
}

/// Handshake-era revisions served on the same endpoint through `initialize`, newest first
/// (MCP 2025-11-25 basic/lifecycle § Version Negotiation; MCP 2026-07-28 basic/transports/streamable-http § Backward compatibility).
pub const LEGACY_SERVED: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// The revision of a handshake-era request without `MCP-Protocol-Version` (MCP 2025-11-25 basic/transports § Protocol Version Header).
pub const LEGACY_DEFAULT: &str = "2025-03-26";

/// The revision `initialize` answers: the requested one when served, else the newest handshake-era one
/// (MCP 2025-11-25 basic/lifecycle § Version Negotiation).
pub fn negotiate_legacy(requested: Option<&str>) -> &'static str {
    requested.and_then(|r| LEGACY_SERVED.iter().find(|v| **v == r)).copied().unwrap_or(LEGACY_SERVED[0])
}
