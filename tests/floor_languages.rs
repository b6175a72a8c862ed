//! The secure-text floor reads its words in the UI languages people use,
//! not only English: a field labelled, described or subroled as a
//! password, a one-time or verification code or a security code in any of
//! them is sent as a placeholder by every importer and by `trim`; words
//! that only resemble one are not.

use ctxgate::import::{import, Format};
use ctxgate::{Gate, Request};

mod common;

const LABELS: &[&str] = &[
    "Passwort",
    "Kennwort",
    "Bestätigungscode",
    "Mot de passe",
    "Code de vérification",
    "Contraseña",
    "Código de verificación",
    "Senha",
    "Código de segurança",
    "Codice di verifica",
    "Wachtwoord",
    "Lösenord",
    "Adgangskode",
    "Passord",
    "Salasana",
    "Hasło",
    "Heslo",
    "Jelszó",
    "Şifre",
    "Mật khẩu",
    "Kata sandi",
    "Пароль",
    "Код подтверждения",
    "Κωδικός πρόσβασης",
    "كلمة المرور",
    "رمز عبور",
    "סיסמה",
    "पासवर्ड",
    "পাসওয়ার্ড",
    "รหัสผ่าน",
    "密码",
    "密碼",
    "验证码",
    "パスワード",
    "비밀번호",
    // Decomposed: a combining tilde, as some keyboards write it.
    "Contrasen\u{303}a",
];

/// Words that name other fields, or hold a secret word's letters only.
const NOT_SECRET: &[&str] = &[
    "Resenha",
    "Seguro de viaje",
    "Benutzername",
    "Nom d'utilisateur",
    "Имя пользователя",
    "用户名",
    "ユーザー名",
    "Parola chiave di ricerca",
];

fn aria_field(label: &str) -> String {
    format!("- textbox \"{label}\" [active] [ref=e1]: hunter2\n- button \"OK\" [ref=e2]")
}

#[test]
fn a_field_labelled_as_a_secret_in_any_language_is_never_sent() {
    let gate = Gate::embedded_default().unwrap();
    for label in LABELS {
        let answer = import(Format::Aria, aria_field(label).as_bytes()).unwrap();
        let json = serde_json::to_string(&answer).unwrap();
        assert!(!json.contains("hunter2"), "{label}: {json}");
        assert!(json.contains(common::SECURE_MARKER), "{label}: {json}");
        let out = gate
            .trim_bytes(json.as_bytes(), &Request::new("app"))
            .unwrap();
        assert!(!out.rendered.contains("hunter2"), "{label}");
    }
}

#[test]
fn a_field_labelled_otherwise_is_sent() {
    for label in NOT_SECRET {
        let answer = import(Format::Aria, aria_field(label).as_bytes()).unwrap();
        let json = serde_json::to_string(&answer).unwrap();
        assert!(json.contains("hunter2"), "{label}: {json}");
    }
}

#[test]
fn a_secure_field_described_in_another_language_is_secure() {
    for description in [
        "champ de texte sécurisé",
        "sicheres Textfeld",
        "campo de texto seguro",
        "セキュアテキストフィールド",
        "защищённое текстовое поле",
        "安全文本栏",
        "보안 텍스트 필드",
    ] {
        let ax = format!(
            r#"{{"role":"AXWindow","name":"w","children":[{{"role":"AXTextField","role_description":"{description}","name":"x","value":"hunter2","children":[{{"role":"AXStaticText","value":"hunter2"}}]}}]}}"#
        );
        let answer = import(Format::AxJson, ax.as_bytes()).unwrap();
        let json = serde_json::to_string(&answer).unwrap();
        assert!(!json.contains("hunter2"), "{description}: {json}");
        let dump = format!(
            "AXWebArea\n++AXTextField AXRoleDescription='{description}' AXValue='hunter2'\n++++AXStaticText AXValue='hunter2'"
        );
        let answer = import(Format::AxDump, dump.as_bytes()).unwrap();
        let json = serde_json::to_string(&answer).unwrap();
        assert!(!json.contains("hunter2"), "{description}: {json}");
    }
    // A plain text field's description is not.
    let ax = r#"{"role":"AXWindow","name":"w","children":[{"role":"AXTextField","role_description":"champ de texte","name":"x","value":"bonjour"}]}"#;
    let json = serde_json::to_string(&import(Format::AxJson, ax.as_bytes()).unwrap()).unwrap();
    assert!(json.contains("bonjour"), "{json}");
}

#[test]
fn a_subrole_in_another_language_makes_the_floor_mask_the_field() {
    let gate = Gate::embedded_default().unwrap();
    for subrole in [
        "contraseña",
        "Passwort",
        "пароль",
        "密码",
        "パスワード",
        "mot de passe",
    ] {
        let answer = format!(
            r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"a","role":"Application","children":[{{"id":"w","role":"Window","focused":true,"children":[{{"id":"f","role":"Text","subrole":"{subrole}","focused":true,"content":[{{"type":"text","text":"hunter2"}}]}}]}}]}}}}"#
        );
        let out = gate
            .trim_bytes(answer.as_bytes(), &Request::new("app"))
            .unwrap();
        assert!(
            !out.rendered.contains("hunter2"),
            "{subrole}: {}",
            out.rendered
        );
        let line = out.report.decisions.iter().find(|d| d.id == "f").unwrap();
        assert_eq!(format!("{:?}", line.outcome), "Masked", "{subrole}");
    }
}
