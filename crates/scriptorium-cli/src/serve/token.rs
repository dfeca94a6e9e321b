//! The bearer token: 32 random bytes as hex, made on first start in
//! `<workspace>/.scriptorium/http-token` (mode 0600) and reused after, so a client
//! configured once keeps working across restarts. The token is never logged.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use scriptorium_backend_api::layers::transaction::RUNTIME_DIR;

/// The token file's name inside the runtime directory.
pub(crate) const TOKEN_FILE: &str = "http-token";

/// Hex digits of a token.
const TOKEN_HEX: usize = 64;

/// The token and where it is kept.
pub(crate) struct Kept {
    /// The token.
    pub(crate) token: String,
    /// The file holding it.
    pub(crate) path: PathBuf,
}

/// The token of the workspace at `root`: the kept one, or a new one written first.
/// A file that holds no well-formed token is replaced.
pub(crate) fn keep(root: &Path) -> Result<Kept, String> {
    let path = root.join(RUNTIME_DIR).join(TOKEN_FILE);
    if let Ok(text) = std::fs::read_to_string(&path) {
        let token = text.trim();
        if well_formed(token) {
            tighten(&path)?;
            return Ok(Kept { token: token.to_owned(), path });
        }
    }
    let token = fresh()?;
    write(&path, &token)?;
    Ok(Kept { token, path })
}

fn well_formed(token: &str) -> bool {
    token.len() == TOKEN_HEX && token.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A new token from the operating system's random source.
fn fresh() -> Result<String, String> {
    let mut bytes = [0u8; TOKEN_HEX / 2];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .map_err(|err| format!("cannot read /dev/urandom for the token: {err}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Write the token by temp file and rename, readable by the owner only.
fn write(path: &Path, token: &str) -> Result<(), String> {
    let temp = path.with_extension("tmp");
    let fail = |err: std::io::Error| format!("cannot write the token file {}: {err}", path.display());
    let _ = std::fs::remove_file(&temp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(&temp).map_err(fail)?;
    file.write_all(format!("{token}\n").as_bytes()).and_then(|()| file.sync_all()).map_err(fail)?;
    std::fs::rename(&temp, path).map_err(fail)
}

/// Make a kept token file owner-only again if someone widened it.
fn tighten(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let meta = std::fs::metadata(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|err| format!("cannot restrict {}: {err}", path.display()))?;
        }
    }
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_once_and_kept() -> Result<(), Box<dyn std::error::Error>> {
        let root = std::env::temp_dir().join(format!("scriptorium-token-{}", std::process::id()));
        std::fs::create_dir_all(root.join(RUNTIME_DIR))?;
        let first = keep(&root)?;
        assert!(well_formed(&first.token));
        let second = keep(&root)?;
        assert_eq!(first.token, second.token);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(std::fs::metadata(&first.path)?.permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(&first.path, "short\n")?;
        let third = keep(&root)?;
        assert_ne!(third.token, first.token, "a damaged token file is replaced");
        std::fs::remove_dir_all(&root)?;
        Ok(())
    }
}
