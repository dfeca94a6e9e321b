//! Who calls a tool: the current turn's persisted authority (spec 02 §5), never the payload.

use crate::tier::Tier;

/// The principal of this install's local owner (the terminal and the web page).
pub const OWNER_PRINCIPAL: &str = "owner";

/// The authority of the turn that calls a tool, as the agent runtime recorded it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Caller {
    /// The turn's tier; `None` (missing or unknown) holds no capability.
    pub tier: Option<Tier>,
    /// Whether a person is at the keyboard (`interaction=interactive`).
    pub interactive: bool,
    /// The principal, for example `owner` or `telegram:42`.
    pub principal_id: String,
    /// The speaker kind, for example `owner`, `human` or `runtime`.
    pub speaker_kind: String,
    /// The stable speaker id, for example `owner/local`.
    pub speaker_id: String,
    /// The speaker's display name.
    pub speaker_display: String,
    /// Where the turn came from: `<session>/<turn>`.
    pub origin_id: String,
    /// The session the turn belongs to.
    pub session_id: String,
}

impl Caller {
    /// The local owner at an interactive surface (terminal, web page), the turn `origin_id`.
    pub fn local_owner(origin_id: impl Into<String>) -> Self {
        Caller {
            tier: Some(Tier::Owner),
            interactive: true,
            principal_id: OWNER_PRINCIPAL.to_owned(),
            speaker_kind: "owner".to_owned(),
            speaker_id: "owner/local".to_owned(),
            speaker_display: "owner".to_owned(),
            origin_id: origin_id.into(),
            session_id: String::new(),
        }
    }

    /// A caller of `tier` with no other authority recorded (a remote or paired turn).
    pub fn with_tier(tier: Option<Tier>) -> Self {
        Caller { tier, ..Caller::default() }
    }
}
