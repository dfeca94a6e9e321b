//! Tier capabilities: the table of spec 02 §5 and fail-closed lookups.

use super::*;

#[test]
fn capabilities_follow_spec_02_5() {
    assert!(allows(Some(Tier::Owner), Capability::TrustedPromote));
    assert!(allows(Some(Tier::Paired), Capability::MemoryRead));
    assert!(allows(Some(Tier::Paired), Capability::SourceAppend));
    assert!(!allows(Some(Tier::Paired), Capability::TrustedPromote));
    assert!(!allows(Some(Tier::McpBrowser), Capability::MemoryRead));
}

#[test]
fn a_missing_or_unknown_tier_holds_nothing() {
    for capability in [Capability::Reply, Capability::MemoryRead, Capability::SourceAppend, Capability::TrustedPromote]
    {
        assert!(!allows(None, capability));
        assert!(!allows(Tier::from_name("Owner"), capability));
        assert!(!allows(Tier::from_name("unpaired"), capability));
    }
}

#[test]
fn names_round_trip() {
    for &tier in Tier::ALL {
        assert_eq!(Tier::from_name(tier.as_str()), Some(tier));
    }
}
