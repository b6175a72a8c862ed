//! The import pipeline end to end: an OS tree with a password field,
//! imported and trimmed, sends no password value and marks the field
//! withheld and filled.

mod common;

use common::{ctxgate, root, SECURE_MARKER};

#[test]
fn imported_password_field_is_withheld_filled_and_its_value_never_sent() {
    let source = root()
        .join("tests/fixtures/realworld/raw/chromium-mac/html/input-password-expected-mac.txt");
    let dump = std::fs::read(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let imported = ctxgate(&["import", "--from", "ax-dump"], &dump);
    assert_eq!(
        imported.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    for format in ["json", "outline"] {
        let trimmed = ctxgate(
            &["trim", "--action", "app", "--format", format],
            &imported.stdout,
        );
        assert_eq!(
            trimmed.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&trimmed.stderr)
        );
        let out = String::from_utf8(trimmed.stdout).unwrap();
        assert!(
            !out.contains('\u{2022}') && !out.contains("%E2%80%A2"),
            "{out}"
        );
        assert!(!out.contains(SECURE_MARKER), "{out}");
        match format {
            "json" => assert!(
                out.contains(r#""ctxgate:withheld":{"rule":"mask:secure-text","empty":false}"#),
                "{out}"
            ),
            _ => assert!(
                out.contains("[ctxgate] withheld by mask:secure-text; it is not empty"),
                "{out}"
            ),
        }
    }
}
