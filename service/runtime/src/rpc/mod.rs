//! JSON-RPC plumbing of the runtime: the error type and its single mapping to the wire
//! ([`error`]), the per-request `_meta` envelope ([`envelope`]), the one-pass typed read of
//! the common request ([`read`]) and response bodies ([`response`]).

pub mod envelope;
pub mod error;
pub mod read;
pub mod response;

pub use envelope::Envelope;
pub use error::{Kind, RpcError};
