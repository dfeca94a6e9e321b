//! Who calls a tool: the current turn's persisted authority (spec 02 §5), never the payload.
//! A tool reads its authority (append-only or not, the provenance of new evidence, whether
//! it may promote) from here only; a request body that tries to set any of it is refused.

use scriptorium_transaction::Provenance;

use crate::tier::{Capability, Tier, allows};

/// The principal of this install's local owner (the terminal and the web page).
pub const OWNER_PRINCIPAL: &str = "owner";

/// The speaker kind of the local owner.
const OWNER_KIND: &str = "owner";

/// The authority of the turn that calls a tool, as the agent runtime recorded it.
///
/// Built by the runtime from its own record of the turn: [`Caller::local_owner`] for the
/// terminal and the web page, [`Caller::paired`] for an approved platform account, or
/// [`Caller::with_tier`] and the public fields for anything else.
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
            speaker_kind: OWNER_KIND.to_owned(),
            speaker_id: "owner/local".to_owned(),
            speaker_display: "owner".to_owned(),
            origin_id: origin_id.into(),
            session_id: String::new(),
        }
    }

    /// A person on an approved platform account (tier `paired`, speaker kind `human`):
    /// `principal_id` such as `telegram:42`, the stable `speaker_id`, the display name,
    /// and the turn `origin_id` (`<session>/<turn>`).
    pub fn paired(
        principal_id: impl Into<String>,
        speaker_id: impl Into<String>,
        speaker_display: impl Into<String>,
        origin_id: impl Into<String>,
    ) -> Self {
        Caller {
            tier: Some(Tier::Paired),
            interactive: true,
            principal_id: principal_id.into(),
            speaker_kind: "human".to_owned(),
            speaker_id: speaker_id.into(),
            speaker_display: speaker_display.into(),
            origin_id: origin_id.into(),
            session_id: String::new(),
        }
    }

    /// A caller of `tier` with no other authority recorded (a remote or paired turn).
    pub fn with_tier(tier: Option<Tier>) -> Self {
        Caller { tier, ..Caller::default() }
    }

    /// Whether this turn may only create files or append bytes (spec 02 §5): every
    /// caller but the `owner` tier, a missing tier included.
    pub fn append_only(&self) -> bool {
        self.tier != Some(Tier::Owner)
    }

    /// Whether this is the local owner at the keyboard, the only caller that may promote
    /// a source (spec 02 §5): tier `owner` with its capability, speaker kind `owner`,
    /// interactive, and this install's owner principal.
    pub fn is_local_owner(&self) -> bool {
        self.tier == Some(Tier::Owner)
            && allows(self.tier, Capability::TrustedPromote)
            && self.interactive
            && self.speaker_kind == OWNER_KIND
            && self.principal_id == OWNER_PRINCIPAL
    }

    /// The provenance new evidence is archived with, or `None` when the runtime recorded
    /// no turn (no tier, principal or origin): evidence then fails with
    /// `WRITER_PRECONDITION_FAILED`.
    pub(crate) fn provenance(&self) -> Option<Provenance> {
        let tier = self.tier?;
        if self.principal_id.trim().is_empty() || self.origin_id.trim().is_empty() {
            return None;
        }
        Some(Provenance {
            principal_id: self.principal_id.clone(),
            speaker_kind: self.speaker_kind.clone(),
            speaker_id: self.speaker_id.clone(),
            speaker_display: self.speaker_display.clone(),
            authority_tier: tier.as_str().to_owned(),
            origin_id: self.origin_id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_tier_may_rewrite() {
        assert!(!Caller::local_owner("s/t").append_only());
        assert!(!Caller::with_tier(Some(Tier::Owner)).append_only());
        assert!(Caller::paired("telegram:42", "telegram/42", "Dave", "s/t").append_only());
        assert!(Caller::with_tier(Some(Tier::McpBrowser)).append_only());
        assert!(Caller::with_tier(None).append_only(), "a missing tier is append-only");
    }

    #[test]
    fn only_the_interactive_local_owner_is_the_local_owner() {
        assert!(Caller::local_owner("s/t").is_local_owner());
        let mut remote = Caller::local_owner("s/t");
        remote.principal_id = "telegram:42".to_owned();
        let mut unattended = Caller::local_owner("s/t");
        unattended.interactive = false;
        let mut runtime = Caller::local_owner("s/t");
        runtime.speaker_kind = "runtime".to_owned();
        let mut paired = Caller::local_owner("s/t");
        paired.tier = Some(Tier::Paired);
        for caller in [remote, unattended, runtime, paired, Caller::with_tier(Some(Tier::Owner))] {
            assert!(!caller.is_local_owner(), "{caller:?}");
        }
    }

    #[test]
    fn provenance_is_the_recorded_turn_or_nothing() {
        let provenance = Caller::paired("telegram:42", "telegram/42", "Dave", "s2/t3").provenance();
        let provenance = provenance.expect("a recorded turn has provenance");
        assert_eq!(
            (provenance.principal_id.as_str(), provenance.authority_tier.as_str(), provenance.origin_id.as_str()),
            ("telegram:42", "paired", "s2/t3")
        );
        assert_eq!((provenance.speaker_id.as_str(), provenance.speaker_display.as_str()), ("telegram/42", "Dave"));
        assert_eq!(Caller::local_owner("").provenance(), None, "no origin");
        assert_eq!(Caller::with_tier(Some(Tier::Owner)).provenance(), None, "no principal");
        let mut untiered = Caller::local_owner("s/t");
        untiered.tier = None;
        assert_eq!(untiered.provenance(), None, "no tier");
    }
}
