//! MRTR in the runtime (MCP 2026-07-28 basic/patterns/mrtr): reading a retry's `inputResponses` and `requestState`,
//! and turning an adapter's "I need input" into an `input_required` result. Works the same
//! for every adapter kind; nothing is stored between rounds.
//!
//! - [`seal`]: AES-256-GCM sealing of `requestState` with a key ring.
//! - [`preflight`]: the runtime's own questions before a tool runs (confirmation, missing
//!   arguments), for every adapter kind.
//!
//! A sealed state holds up to three parts: `a`, the adapter's state; `r`, the runtime's
//! ([`RuntimeState`]): arguments completed by elicitation, a given confirmation, and who asked
//! the previous round's questions; and `n`, the number of the round it starts (call records
//! name each round). Every `input_required` result carries one, so rounds count true even
//! when neither the adapter nor the runtime has state to keep.

pub mod preflight;
pub mod seal;

use std::collections::BTreeMap;

use mcp_adapter_api::InputRequired;
use mcp_protocol::mrtr::InputRequest;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub use seal::{Binding, Sealer, StateError};

use crate::rpc::RpcError;

/// Who asked the previous round's questions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Asker {
    /// The adapter: its answers and state go back to it.
    #[default]
    Adapter,
    /// The runtime (preflight): the adapter has not run yet.
    Runtime,
}

/// The runtime's part of a sealed state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RuntimeState {
    /// Arguments completed by elicitation; they replace the client's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The user confirmed running the tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirmed: bool,
    /// Who asked the previous round.
    #[serde(default)]
    pub asked: Asker,
}

/// What a retry brought back.
#[derive(Debug, Default)]
pub struct RoundInput {
    /// `inputResponses`.
    pub responses: Option<Map<String, Value>>,
    /// The adapter's state from the previous round (already verified).
    pub state: Option<Value>,
    /// The runtime's state from the previous round (already verified).
    pub runtime: Option<RuntimeState>,
    /// This round's number: 0 for a first request, then as the sealed state counts (1 for a
    /// retry whose state does not say).
    pub round: u32,
}

/// Takes `inputResponses` and `requestState` out of `params` and verifies the state against
/// `binding` (MCP 2026-07-28 basic/patterns/mrtr § Server behaviour steps 1–2).
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
    let mut sealed = match params.remove("requestState") {
        None => {
            let round = u32::from(responses.is_some());
            return Ok(RoundInput { responses, state: None, runtime: None, round });
        }
        Some(Value::String(token)) => sealer.open(&token, binding).map_err(|e| {
            tracing::debug!(error = %e, method = binding.method, target = binding.target, "requestState refused");
            RpcError::invalid_params(format!("Invalid requestState: {e}"))
                .with_data(json!({ "reason": "invalid_request_state" }))
        })?,
        Some(_) => {
            return Err(RpcError::invalid_params(
                "Invalid params: requestState must be the exact string the server sent",
            ));
        }
    };
    let state = sealed.get_mut("a").map(Value::take);
    let runtime = sealed.get_mut("r").and_then(|r| serde_json::from_value(r.take()).ok());
    let round = sealed.get("n").and_then(Value::as_u64).map_or(1, |n| u32::try_from(n).unwrap_or(u32::MAX));
    Ok(RoundInput { responses, state, runtime, round })
}

/// The body of an `input_required` result (MCP 2026-07-28 basic/patterns/mrtr § InputRequiredResult); no cache hints.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredBody {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    input_requests: BTreeMap<String, InputRequest>,
    request_state: String,
}

/// Checks that the client can answer every request (else `-32021`, MCP 2026-07-28 basic/patterns/mrtr § Input requests) and seals the
/// state bound to `binding`, numbered as the round after `round`.
pub fn interim(
    required: InputRequired,
    runtime: Option<&RuntimeState>,
    capabilities: &Value,
    sealer: &Sealer,
    binding: &Binding<'_>,
    round: u32,
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
    if required.requests.is_empty() && required.state.is_none() && runtime.is_none() {
        return Err(RpcError::internal(&format!(
            "adapter answered input_required for {} '{}' with neither inputRequests nor state",
            binding.method, binding.target
        )));
    }
    let mut sealed = Map::new();
    if let Some(a) = required.state {
        sealed.insert("a".to_owned(), a);
    }
    if let Some(r) = runtime {
        sealed.insert("r".to_owned(), serde_json::to_value(r).expect("serializable state"));
    }
    sealed.insert("n".to_owned(), Value::from(round.saturating_add(1)));
    let request_state = sealer.seal(binding, &Value::Object(sealed));
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
