//! o200k_base token counting (spec 01 §7.1, decision Q3).
//!
//! bpe-openai (github/rust-gems) embeds the o200k_base table already serialized at build
//! time, so nothing is fetched at run time and loading it takes ~90 ms instead of the
//! 230–290 ms tiktoken-rs spends decoding and cloning its rank file (docs/ARCHITECTURE.md,
//! Decisions). It is loaded on first use only, so commands that never count tokens never
//! pay. Its pre-tokenizer is tiktoken's o200k pattern with the `\s+(?!\S)`
//! look-ahead emulated, and its backtracking BPE gives tiktoken's tokens; a differential
//! proptest against tiktoken-rs `encode_ordinary` and the committed Python tiktoken oracle
//! hold it to that. Special-token strings such as `<|endoftext|>` are plain text, as in
//! `encode_ordinary` (decision Q3): counting never fails an install.

/// The o200k_base token ids of `text`, every special-token string read as plain text.
pub fn o200k_ids(text: &str) -> Vec<u32> {
    bpe_openai::o200k_base().encode(text)
}

/// The number of o200k_base tokens of `text` (see [`o200k_ids`]).
pub fn count_o200k(text: &str) -> usize {
    bpe_openai::o200k_base().count(text)
}
