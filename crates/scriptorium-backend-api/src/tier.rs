//! Trust tiers and their capabilities (spec 02 §5): fail-closed on a missing or unknown tier.

/// A resolved authority tier of the current turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tier {
    /// The local owner (terminal, web): every capability.
    Owner,
    /// An approved platform account: reply, read memory, append sources.
    Paired,
    /// Browser control only: no memory capability.
    McpBrowser,
}

/// A capability a tier may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capability {
    /// `reply`.
    Reply,
    /// `memory.read`: recall and the read tools.
    MemoryRead,
    /// `memory.source.append`: `memory_update` (append-only unless owner).
    SourceAppend,
    /// `memory.trusted.promote`: `memory_promote`.
    TrustedPromote,
    /// `browser.control`.
    BrowserControl,
}

impl Capability {
    /// The capability's name, for example `memory.read`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Capability::Reply => "reply",
            Capability::MemoryRead => "memory.read",
            Capability::SourceAppend => "memory.source.append",
            Capability::TrustedPromote => "memory.trusted.promote",
            Capability::BrowserControl => "browser.control",
        }
    }
}

impl Tier {
    /// Every tier.
    pub const ALL: &'static [Tier] = &[Tier::Owner, Tier::Paired, Tier::McpBrowser];

    /// The tier's name: `owner`, `paired` or `mcp_browser`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Tier::Owner => "owner",
            Tier::Paired => "paired",
            Tier::McpBrowser => "mcp_browser",
        }
    }

    /// The tier named `name`; `None` for any other name, which then holds no capability.
    pub fn from_name(name: &str) -> Option<Tier> {
        Tier::ALL.iter().copied().find(|tier| tier.as_str() == name)
    }

    /// The capabilities of the tier.
    pub const fn capabilities(self) -> &'static [Capability] {
        match self {
            Tier::Owner => &[
                Capability::Reply,
                Capability::MemoryRead,
                Capability::SourceAppend,
                Capability::TrustedPromote,
                Capability::BrowserControl,
            ],
            Tier::Paired => &[Capability::Reply, Capability::MemoryRead, Capability::SourceAppend],
            Tier::McpBrowser => &[Capability::BrowserControl],
        }
    }
}

/// Whether a caller of `tier` holds `capability`: a missing tier holds none (fail-closed,
/// spec 02 §5 and decision 13: no tier is the narrowest audience, never the owner).
pub fn allows(tier: Option<Tier>, capability: Capability) -> bool {
    tier.is_some_and(|tier| tier.capabilities().contains(&capability))
}

#[cfg(test)]
mod tests;
