//! The repository carries its own copy of the Apache configuration that
//! `htaccel serve` must equal (`tests/oracle/serve-equivalent.conf`), so
//! that a fresh clone runs its differential suite with nothing beside it.
//! The project's reference copy lives in `shared/oracle/` beside the
//! repository where the project is developed; wherever it is present, the
//! two must be the same text, or the suite would test against a stale
//! oracle.

use std::path::Path;

#[test]
fn oracle_copy_is_current() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let ours = std::fs::read_to_string(repo.join("tests/oracle/serve-equivalent.conf"))
        .expect("the repository's oracle configuration is readable");
    assert!(
        ours.contains("@DOCROOT@") && ours.contains("@LISTEN@"),
        "the oracle configuration keeps its placeholders"
    );
    let reference = repo.join("../shared/oracle/serve-equivalent.conf");
    match std::fs::read_to_string(&reference) {
        Ok(theirs) => assert_eq!(
            ours,
            theirs,
            "tests/oracle/serve-equivalent.conf differs from {}: copy the reference over it",
            reference.display()
        ),
        // A clone on its own has only its copy, which is then the oracle.
        Err(e) => eprintln!("no reference beside the repository ({e}); the copy is the oracle"),
    }
}
