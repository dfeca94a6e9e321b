//! `memory_get` (spec 02 §7).

use serde_json::Value;

use super::{Caller, ToolSpec};
use crate::local::Host;
use crate::tier::Capability;

pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "memory_get",
    description: "SCAFFOLD",
    input_schema: r#"{"type":"object","properties":{}}"#,
    max_chars: 30000,
    capability: Capability::MemoryRead,
};

pub(super) fn run(host: &Host<'_>, arguments: &Value, caller: &Caller) -> String {
    let _ = (host, arguments, caller);
    String::from("SCAFFOLD: not built yet")
}
