//! docs/dataplanes.md is generated from the data-plane catalogue: this test fails when the
//! file differs from `locality_model::dataplane::markdown::render()`. Regenerate with
//! `LOCALITY_WRITE_DOCS=1 cargo test -p locality-model --test it dataplanes_doc`.

use std::path::Path;

#[test]
fn docs_dataplanes_md_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/dataplanes.md");
    let want = locality_model::dataplane::markdown::render();
    if std::env::var_os("LOCALITY_WRITE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/dataplanes.md is not the catalogue's rendering: regenerate it with \
         LOCALITY_WRITE_DOCS=1 cargo test -p locality-model --test it dataplanes_doc"
    );
}
