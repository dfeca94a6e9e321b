//! Integration tests of scriptorium-derived-views: the transaction vectors' derived files
//! and the o200k_base token-count oracle.

mod oracle;
mod vectors;
