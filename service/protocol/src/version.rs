//! Protocol revisions (digest a.7): compared as exact strings.

/// The revision this runtime implements.
pub const LATEST: &str = "2026-07-28";

/// Revisions served through the per-request envelope. Only modern revisions can appear here:
/// a legacy revision cannot be used without the `initialize` handshake (digest a.7 [DECISION]).
pub const SUPPORTED: &[&str] = &[LATEST];

/// Handshake-era revisions. A request naming one of these is a legacy client at a modern-only
/// server; we answer `-32022` naming [`SUPPORTED`] (digest a.7, i.3).
pub const LEGACY: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// True when `version` is served by this runtime.
pub fn is_supported(version: &str) -> bool {
    SUPPORTED.contains(&version)
}
