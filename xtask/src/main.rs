//! Repository automation (`cargo xtask …`).

fn main() {}
