//! MRTR in the runtime (digest d): reading a retry's `inputResponses` and `requestState`,
//! and turning an adapter's "I need input" into an `input_required` result. Works the same
//! for every adapter kind; nothing is stored between rounds.
//!
//! - [`seal`]: AES-256-GCM sealing of `requestState` with a key ring.

pub mod seal;

use std::collections::BTreeMap;

use mcp_adapter_api::InputRequired;
use mcp_protocol::mrtr::InputRequest;
use serde::Serialize;
use serde_json::{Map, Value, json};

pub use seal::{Binding, Sealer, StateError};

use crate::rpc::RpcError;

/// What a retry brought back.
#[derive(Debug, Default)]
pub struct RoundInput {
    /// `inputResponses`.
    pub responses: Option<Map<String, Value>>,
    /// The adapter's state from the previous round (already verified).
    pub state: Option<Value>,
}

/// Takes `inputResponses` and `requestState` out of `params` and verifies the state against
/// `binding` (digest d.5 steps 1–2).
pub fn take_input(
    params: &mut Map<String, Value>,
    sealer: &Sealer,
    binding: &Binding<'_>,
) -> Result<RoundInput, RpcError> {
    let responses = match params.remove("inputResponses") {
        None => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => {
            return Err(RpcError::invalid_params(
                "Invalid params: inputResponses must be an object keyed by the inputRequests keys",
            ));
        }
    };
    let state = match params.remove("requestState") {
        None => None,
        Some(Value::String(token)) => {
            let sealed = sealer.open(&token, binding).map_err(|e| {
                tracing::debug!(error = %e, method = binding.method, target = binding.target, "requestState refused");
                RpcError::invalid_params(format!("Invalid requestState: {e}"))
                    .with_data(json!({ "reason": "invalid_request_state" }))
            })?;
            sealed.get("a").cloned()
        }
        Some(_) => {
            return Err(RpcError::invalid_params(
                "Invalid params: requestState must be the exact string the server sent",
            ));
        }
    };
    Ok(RoundInput { responses, state })
}

/// The body of an `input_required` result (digest d.2); no cache hints.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredBody {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    input_requests: BTreeMap<String, InputRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_state: Option<String>,
}

/// Checks that the client can answer every request (else `-32021`, digest d.3) and seals the
/// state bound to `binding`.
pub fn interim(
    required: InputRequired,
    capabilities: &Value,
    sealer: &Sealer,
    binding: &Binding<'_>,
) -> Result<InputRequiredBody, RpcError> {
    let missing: Vec<&InputRequest> = required.requests.values().filter(|r| !r.is_supported_by(capabilities)).collect();
    if !missing.is_empty() {
        let mut need = Map::new();
        for r in &missing {
            merge(&mut need, r.required_capability());
        }
        let names: Vec<String> = need.keys().cloned().collect();
        return Err(RpcError::missing_capability(
            format!(
                "Missing required client capability: {} '{}' needs the client to support {}; declare it in _meta clientCapabilities",
                binding.method,
                binding.target,
                names.join(", ")
            ),
            Value::Object(need),
        ));
    }
    if required.requests.is_empty() && required.state.is_none() {
        return Err(RpcError::internal(&format!(
            "adapter answered input_required for {} '{}' with neither inputRequests nor state",
            binding.method, binding.target
        )));
    }
    let request_state = required.state.map(|a| sealer.seal(binding, &json!({ "a": a })));
    Ok(InputRequiredBody { input_requests: required.requests, request_state })
}

fn merge(into: &mut Map<String, Value>, add: Value) {
    let Value::Object(add) = add else { return };
    for (k, v) in add {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(existing)), v @ Value::Object(_)) => merge(existing, v),
            (None, v) => {
                into.insert(k, v);
            }
            _ => {}
        }
    }
}
