//! Integration tests of scriptorium-derived-views: the transaction vectors' derived files,
//! the o200k_base token-count oracle and the differential test against tiktoken-rs, and
//! incremental rebuilds against full ones.

mod creation_order;
mod incremental;
mod oracle;
mod tiktoken_parity;
mod vectors;
