//! Target resolution against v2, legacy and benchmark archives.

use std::cell::Cell;

use super::*;

fn v2_archive(ids: &[&str]) -> String {
    let mut text = format!("{}\n\n", scriptorium_archive_format::FORMAT_MARKER);
    for (n, id) in ids.iter().enumerate() {
        if n > 0 {
            text.push('\n');
        }
        text.push_str(&format!(
            "<a id=\"{}\"></a>\n<!-- source-id:{id} -->\n<!-- record-lines:1 -->\n[2024-03-15] user: hi\n",
            source_anchor(id)
        ));
    }
    text
}

fn sources() -> MemorySources {
    [
        ("sources/openprogram/_v2/s.md".to_owned(), v2_archive(&["openprogram/s/m1", "openprogram/s/m2"])),
        ("sources/D1.md".to_owned(), "# D1\n\n<a id=\"d1-1\"></a>\n[2024] user: x [D1:1]\n".to_owned()),
        (
            "sources/openprogram/old.md".to_owned(),
            format!(
                "# old\n\n<a id=\"{}\"></a>\n<!-- source-id:openprogram/old/m1 -->\n[2023] user: y\n",
                source_anchor("openprogram/old/m1")
            ),
        ),
    ]
    .into_iter()
    .collect()
}

#[test]
fn targets_resolve_in_spec_order() -> Result<(), SourceReadError> {
    let resolver = SourceResolver::new(sources());
    let topic = "topics/people/x.md";
    let v2 = format!("../../sources/openprogram/_v2/s.md#{}", source_anchor("openprogram/s/m2"));
    let legacy = format!("../../sources/openprogram/old.md#{}", source_anchor("openprogram/old/m1"));
    assert_eq!(resolver.resolve_target(topic, "openprogram/s/m9")?.as_deref(), Some("openprogram/s/m9"));
    assert_eq!(resolver.resolve_target(topic, " D7:3 ")?.as_deref(), Some("D7:3"));
    assert_eq!(resolver.resolve_target(topic, &v2)?.as_deref(), Some("openprogram/s/m2"));
    assert_eq!(resolver.resolve_target(topic, &legacy)?.as_deref(), Some("openprogram/old/m1"));
    assert_eq!(resolver.resolve_target(topic, "../../sources/D1.md#d1-1")?.as_deref(), Some("D1:1"));
    assert_eq!(resolver.resolve_target(topic, "anything#D12-30")?.as_deref(), Some("D12:30"));
    assert_eq!(resolver.resolve_target(topic, "../sources/openprogram/_v2/s.md#source-0")?, None);
    assert_eq!(resolver.resolve_target(topic, "https://example.com/x")?, None);
    Ok(())
}

#[test]
fn ids_locate_v2_then_legacy_then_benchmark() -> Result<(), SourceReadError> {
    let resolver = SourceResolver::new(sources());
    let topic = "topics/x.md";
    let link = resolver.relative_link(topic, "openprogram/s/m1")?;
    assert_eq!(link, Some(format!("../sources/openprogram/_v2/s.md#{}", source_anchor("openprogram/s/m1"))));
    let link = resolver.relative_link(topic, "openprogram/old/m1")?;
    assert_eq!(link, Some(format!("../sources/openprogram/old.md#{}", source_anchor("openprogram/old/m1"))));
    assert_eq!(resolver.relative_link(topic, "D1:1")?.as_deref(), Some("../sources/D1.md#d1-1"));
    assert!(!resolver.exists("D1:2")?);
    assert!(!resolver.exists("openprogram/s/m9")?);
    assert_eq!(resolver.trust("openprogram/s/m1")?, Some(TrustState::Trusted));
    assert_eq!(resolver.trust("openprogram/old/m1")?, None);
    Ok(())
}

struct Counting {
    inner: MemorySources,
    reads: Cell<usize>,
}

impl SourceLookup for Counting {
    fn read_source(&self, path: &str) -> std::io::Result<Option<Vec<u8>>> {
        self.reads.set(self.reads.get() + 1);
        if path.contains("broken") {
            return Err(std::io::Error::other("disk on fire"));
        }
        self.inner.read_source(path)
    }
}

#[test]
fn each_file_is_read_once_and_errors_surface() {
    let resolver = SourceResolver::new(Counting { inner: sources(), reads: Cell::new(0) });
    for _ in 0..3 {
        assert!(matches!(resolver.exists("openprogram/s/m1"), Ok(true)));
        assert!(matches!(resolver.exists("openprogram/s/m2"), Ok(true)));
    }
    assert_eq!(resolver.lookup().reads.get(), 1);
    let err = resolver.resolve_target("topics/x.md", "../sources/broken/x.md#a").expect_err("read fails");
    assert_eq!(err.path, "sources/broken/x.md");
    assert!(resolver.resolve_target("topics/x.md", "../sources/broken/x.md#a").is_err());
    assert_eq!(resolver.lookup().reads.get(), 2);
}
