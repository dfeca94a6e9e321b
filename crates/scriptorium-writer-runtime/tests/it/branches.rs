//! Branch walks.
