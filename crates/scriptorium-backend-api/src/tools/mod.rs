//! The seven model-facing memory tools (spec 02 §7), transport-neutral: one registry that
//! the MCP server, the HTTP API and an embedding agent runtime all call, so no surface
//! re-implements a tool. Each tool is a [`ToolSpec`] (name, description, input schema,
//! output cap, the capability its gate needs) and a handler in its own file.
//!
//! A call always answers a string: the tool's output, a short notice, or a `TxError`
//! (`{"ok":false,"error":{"code","message","path"[,"details"]}}`).

mod browse;
mod caller;
pub(crate) mod get;
mod grep;
mod output;
mod promote;
mod search;
pub(crate) mod status;
mod update;

use serde_json::Value;

pub use self::caller::{Caller, OWNER_PRINCIPAL};
pub(crate) use self::output::{cap_chars, notice, tx_error};

use crate::local::Host;
use crate::tier::{Capability, allows};

/// One tool as a model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolSpec {
    /// The tool's name, for example `memory_search`.
    pub name: &'static str,
    /// What the model is told the tool does.
    pub description: &'static str,
    /// The JSON Schema of the input object, as JSON text.
    pub input_schema: &'static str,
    /// The output's cap in characters (Unicode scalar values).
    pub max_chars: usize,
    /// What the caller's tier must hold (spec 02 §5's tool gate).
    pub capability: Capability,
}

/// Every tool, in the order of spec 02 §7.
pub const TOOLS: &[ToolSpec] =
    &[search::SPEC, grep::SPEC, get::SPEC, browse::SPEC, update::SPEC, promote::SPEC, status::SPEC];

/// The tool named `name`.
pub fn tool(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|spec| spec.name == name)
}

/// Run the tool `name` on the local backend: the gate, the handler, the cap.
pub(crate) fn call(host: &Host<'_>, name: &str, arguments: &Value, caller: &Caller) -> String {
    let Some(spec) = tool(name) else {
        return tx_error(&crate::Error::new(crate::ErrorCode::InvalidArgument, format!("unknown tool {name:?}")));
    };
    if !allows(caller.tier, spec.capability) {
        return tx_error(&crate::Error::new(
            crate::ErrorCode::PermissionDenied,
            format!("{} needs the capability {}", spec.name, spec.capability.as_str()),
        ));
    }
    let output = match spec.name {
        "memory_search" => search::run(host, arguments, caller),
        "memory_grep" => grep::run(host, arguments, caller),
        "memory_get" => get::run(host, arguments, caller),
        "memory_browse" => browse::run(host, arguments, caller),
        "memory_update" => update::run(host, arguments, caller),
        "memory_promote" => promote::run(host, arguments, caller),
        _ => status::run(host, arguments, caller),
    };
    cap_chars(output, spec.max_chars)
}

#[cfg(test)]
mod tests;
