//! JSON-RPC plumbing of the runtime: the error type and its single mapping to the wire
//! ([`error`]), the per-request `_meta` envelope ([`envelope`]) and the client it names
//! ([`client`]), the one-pass typed read of
//! the common request ([`read`]), the served methods and a checked request ([`request`]),
//! request metadata headers ([`headers`]), response bodies ([`response`]) and a method's
//! transport-neutral answer ([`reply`]).

pub mod client;
pub mod envelope;
pub mod error;
pub mod headers;
pub mod read;
pub mod reply;
pub mod request;
pub mod response;

pub use envelope::Envelope;
pub use error::{Kind, RpcError};
pub use reply::{Frame, Reply};
pub use request::{Accepts, Method, Request};
