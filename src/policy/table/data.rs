//! The embedded default's rule values and plans, as regorus gives them
//! (`policy::table`). Generated; `policy::table::tests` recomputes it and
//! `policies/default.table` from `policies/default.rego` and fails when they
//! differ. Regenerate with
//! `UPDATE_EXPECT=1 cargo test --lib the_default_table_is_regorus_answers`.

use super::{Entry, Spans};

/// The action names there is a table for, in its order; after them, the
/// table of every other name.
pub(super) const ACTIONS: &[&str] = &["selection", "focus", "window", "app"];

/// The plan's title patterns' names, in its order.
pub(super) const TITLES: &[&str] = &["one-time-code", "passcode", "password", "pin"];

/// The attribute names the default tests for, sorted.
pub(super) const ATTRIBUTE_NAMES: &[&str] = &["author"];

/// The distinct rule values.
pub(super) const VALUES: &[Entry] = &[
    Entry::Strings(&[]),
    Entry::Strings(&["secret-title"]),
    Entry::Strings(&["secure-text"]),
    Entry::Strings(&["secret-title", "secure-text"]),
    Entry::Strings(&["focus-path"]),
    Entry::Strings(&["selection"]),
    Entry::Strings(&["focus-path", "selection"]),
    Entry::Strings(&["enclosing-document"]),
    Entry::Strings(&["enclosing-document", "focus-path"]),
    Entry::Strings(&["enclosing-document", "selection"]),
    Entry::Strings(&["enclosing-document", "focus-path", "selection"]),
    Entry::Strings(&["invisible"]),
    Entry::Number(0.0),
    Entry::Number(80.0),
    Entry::Number(100.0),
    Entry::Number(90.0),
    Entry::Number(50.0),
    Entry::Number(20.0),
    Entry::Number(-10.0),
    Entry::Number(30.0),
    Entry::Number(110.0),
    Entry::Number(40.0),
    Entry::Strings(&["author"]),
];

/// Per per-element rule defined, in evaluation order: per action, where its
/// table is in `BYTES` (start, length), each byte an index into `VALUES` or
/// `MISSING`; `None` when what it reads cannot be enumerated.
pub(super) const RULES: &[(&str, Option<Spans>)] = &[
    ("mask", Some(&[(0, 2080), (0, 2080), (0, 2080), (0, 2080), (0, 2080)])),
    ("keep", Some(&[(2080, 104), (2080, 104), (2184, 104), (2184, 104), (2184, 104)])),
    ("prune", Some(&[(2288, 2), (2288, 2), (2288, 2), (2288, 2), (2288, 2)])),
    ("priority", Some(&[(2290, 6760), (2290, 6760), (2290, 6760), (2290, 6760), (2290, 6760)])),
    ("strip", Some(&[(9050, 16), (9050, 16), (9066, 16), (9066, 16), (9050, 16)])),
];

pub(super) const BYTES: &[u8] = include_bytes!("../../../policies/default.table");

/// The distinct values of the per-request rules, as the plan reads them (JSON).
pub(super) const JSON: &[&str] = &[
    "\"selection\"",
    "{\"tokens\":8000}",
    "[{\"assigned\":true,\"id\":\"credential-assignment\",\"pattern\":\"(?-u:[A-Za-z0-9]*(?i:passw(?:or)?d|passphrase|passcode|secret(?:[_-]?access)?[_-]?key|client[_-]?secret|secret|api_?key|api-key|(?:auth|access|refresh)[_-]?token|api_?token|api-token)|(?:[A-Za-z0-9]*[a-z0-9])?Pwd|[A-Z0-9]*PWD|(?i:pwd))[\\\"']?[ \\\\t]*(?::=|=>|:|=)[ \\\\t]*(?:\\\"[^\\\"\\\\r\\\\n]{4,}\\\"|'[^'\\\\r\\\\n]{4,}'|[^\\\\s\\\"'<>]{4,})|(?-u:(?:[A-Za-z0-9]*[a-z0-9])?Pin|[A-Z0-9]*PIN|(?i:pin))[\\\"']?[ \\\\t]*(?::=|=>|:|=)[ \\\\t]*(?:\\\"[0-9]{4,}\\\"|'[0-9]{4,}'|[0-9]{4,})\",\"replace\":\"[credential]\"},{\"assigned\":true,\"id\":\"password-assignment\",\"pattern\":\"(?:(?i:passwort|kennwort|clave|mot[ _-]?de[ _-]?passe|senha|palavra-passe|wachtwoord|has(?:ł|l)o|l(?:ö|o)senord|adgangskode|passord|salasana|heslo|parola|(?:ş|s)ifre|kata[ _-]?sandi|contrase(?:ñ|n)a|jelsz(?:ó|o)|m(?:ậ|a)t[ _-]?kh(?:ẩ|a)u)|(?-u:(?:[A-Za-z0-9]+[_.-])+(?:PASS|[Pp]ass)))[\\\"']?[ \\\\t]*(?::=|=>|:|=|：)[ \\\\t]*(?:\\\"[^\\\"\\\\r\\\\n]+\\\"|'[^'\\\\r\\\\n]+'|[^\\\\s\\\"'<>]+)\",\"replace\":\"[credential]\"},{\"assigned\":true,\"id\":\"password-assignment-script\",\"pattern\":\"(?:пароль|Пароль|ПАРОЛЬ|лозинка|Лозинка|κωδικός|Κωδικός|ΚΩΔΙΚΌΣ|密码|密碼|口令|パスワード|暗証番号|비밀번호|암호|รห\u{e31}สผ\u{e48}าน|كلمة المرور|كلمة السر|رمز عبور|گذرواژه|סיסמה|סיסמא|पासवर\u{94d}ड|প\u{9be}সওয\u{9bc}\u{9be}র\u{9cd}ড)[\\\"']?[ \\\\t]*(?::=|=>|:|=|：)[ \\\\t]*(?:\\\"[^\\\"\\\\r\\\\n]+\\\"|'[^'\\\\r\\\\n]+'|[^\\\\s\\\"'<>]+)\",\"replace\":\"[credential]\"},{\"assigned\":true,\"id\":\"session-id\",\"pattern\":\"(?i:(?:[a-z0-9]+[_.-])*(?:session(?:[_-]?id)?|sess(?:[_-]?id)?|sid|ssid|phpsessid|jsessionid|asp\\\\.net_sessionid|connect\\\\.sid))[\\\"']?[ \\\\t]*[:=][ \\\\t]*[\\\"']?[A-Za-z0-9%._~+/:-]{8,}=*\",\"replace\":\"[login state]\"},{\"assigned\":true,\"id\":\"signed-url\",\"pattern\":\"(?i:x-(?:amz|goog)-(?:signature|credential|security-token)|sig|signature)=[^&#\\\\s\\\"'<>]{4,}\",\"replace\":\"[query credential]\"},{\"assigned\":true,\"id\":\"token-assignment\",\"pattern\":\"(?-u:[A-Za-z0-9]*(?i:token|credentials?|private[_-]?key))[\\\"']?[ \\\\t]*(?::=|=>|:|=)[ \\\\t]*(?:\\\"[^\\\"\\\\r\\\\n]{8,}\\\"|'[^'\\\\r\\\\n]{8,}'|[^\\\\s\\\"'<>]{8,})\",\"replace\":\"[credential]\"},{\"id\":\"ai-api-key\",\"pattern\":\"sk-[A-Za-z0-9_-]{20,}\",\"replace\":\"[api key]\"},{\"id\":\"authorization-header\",\"pattern\":\"(?i:(?:proxy-)?authorization[\\\"']?[ \\\\t]*[:=][ \\\\t]*[\\\"']?(?:(?:[ac-z0-9_][a-z0-9_-]*|b(?:[b-df-z0-9_-][a-z0-9_-]*|a(?:[a-rt-z0-9_-][a-z0-9_-]*|s(?:[a-hj-z0-9_-][a-z0-9_-]*|i(?:[abd-z0-9_-][a-z0-9_-]*|c[a-z0-9_-]+)?)?)?|e(?:[b-z0-9_-][a-z0-9_-]*|a(?:[a-qs-z0-9_-][a-z0-9_-]*|r(?:[a-df-z0-9_-][a-z0-9_-]*|e(?:[a-qs-z0-9_-][a-z0-9_-]*|r[a-z0-9_-]+)?)?)?)?)?)[ \\\\t]+[a-z._~+/,:\\\"-]*[0-9=][^\\\\r\\\\n]*|[a-z0-9._~+/-]{12,}=*))\",\"replace\":\"[auth header]\"},{\"id\":\"aws-access-key\",\"pattern\":\"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\",\"replace\":\"[aws key]\"},{\"id\":\"aws-secret-key\",\"pattern\":\"(?:AKIA|ASIA)[0-9A-Z]{16}[\\\"']?[\\\\s,;:|=]{1,6}[\\\"']?[A-Za-z0-9/+]{40}|(?i:secret[ _-]?access[ _-]?key)[\\\"']?[\\\\s:=|,]{1,6}[\\\"']?[A-Za-z0-9/+]{40}\",\"replace\":\"[aws credentials]\"},{\"id\":\"azure-storage-key\",\"pattern\":\"AccountKey=[A-Za-z0-9+/]{86}==\",\"replace\":\"AccountKey=[azure key]\"},{\"id\":\"basic-auth\",\"pattern\":\"(?i)authorization[\\\"']?[ \\\\t]*[:=]?[ \\\\t]*[\\\"']?basic[ \\\\t]+[A-Za-z0-9+/]{4,}={0,2}\",\"replace\":\"[basic credentials]\"},{\"id\":\"bearer-token\",\"pattern\":\"(?i)bearer\\\\s+[A-Za-z0-9._~+/-]{16,}=*\",\"replace\":\"Bearer [token]\"},{\"id\":\"card-number\",\"luhn\":true,\"pattern\":\"\\\\d+(?:[-./+ \\\\t\\\\r\\\\n\\\\x{A0}\\\\x{2007}\\\\x{2009}\\\\x{202F}\\\\x{3000}\\\\x{2010}-\\\\x{2015}\\\\x{2027}\\\\x{30FB}\\\\x{30FC}\\\\x{FF0D}\\\\x{FF0F}\\\\x{FF65}\\\\x{FF70}]{1,3}\\\\d+)*\",\"replace\":\"[card number]\"},{\"id\":\"chat-bot-token\",\"pattern\":\"bot[0-9]{5,12}:[A-Za-z0-9_-]{30,50}|[0-9]{8,12}:AA[A-Za-z0-9_-]{30,40}|discord(?:app)?\\\\.com/api/webhooks/[0-9]{15,21}/[A-Za-z0-9_-]{30,100}|webhook\\\\.office\\\\.com/webhookb2/[A-Za-z0-9@/._-]{30,}\",\"replace\":\"[bot token]\"},{\"id\":\"cli-credential\",\"pattern\":\"--(?:[a-z0-9]+-)*(?:password|passwd|pass|pwd|token|secret|api-?key|apikey|credentials?)(?:=|[ \\\\t]+)[\\\"']?[^\\\\s\\\"'-][^\\\\s\\\"']*\",\"replace\":\"[credential]\"},{\"id\":\"cli-password\",\"pattern\":\"(?:mysql[a-z-]*|mariadb[a-z-]*|sshpass)(?:[ \\\\t]+[^\\\\s|;&]+)*?[ \\\\t]+-p[ \\\\t]*[^\\\\s-][^\\\\s]*|redis-cli(?:[ \\\\t]+[^\\\\s|;&]+)*?[ \\\\t]+-a[ \\\\t]*[^\\\\s-][^\\\\s]*|curl(?:[ \\\\t]+[^\\\\s|;&]+)*?[ \\\\t]+(?:-u|--user|--proxy-user)[ \\\\t=]*[\\\"']?[^\\\\s:\\\"']*:[^\\\\s\\\"']+\",\"replace\":\"[credential]\"},{\"id\":\"cloud-service-token\",\"pattern\":\"pscale_(?:tkn|pw)_[A-Za-z0-9_.-]{32,}|sbp_[a-f0-9]{40}|dp\\\\.(?:pt|st|sa|ct)\\\\.[A-Za-z0-9]{40,}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}|xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}|NRAK-[A-Z0-9]{27}|key-[0-9a-f]{32}\",\"replace\":\"[api key]\"},{\"id\":\"cookie-header\",\"pattern\":\"(?i:(?:set-)?cookie)[\\\"']?[ \\\\t]*:[ \\\\t]*[\\\"']?[^\\\\s;=,\\\"']+=[^\\\\r\\\\n]*\",\"replace\":\"[header withheld]\"},{\"id\":\"github-token\",\"pattern\":\"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}\",\"replace\":\"[github token]\"},{\"id\":\"gitlab-token\",\"pattern\":\"gl(?:pat|ptt|rt|dt|ft|imt|oas|cbt|soat|agent)-[0-9A-Za-z_-]{20,}\",\"replace\":\"[gitlab token]\"},{\"id\":\"google-api-key\",\"pattern\":\"AIza[0-9A-Za-z_-]{35}|GOCSPX-[0-9A-Za-z_-]{28}|ya29\\\\.[0-9A-Za-z_-]{20,}\",\"replace\":\"[google api key]\"},{\"id\":\"iban\",\"mod97\":true,\"pattern\":\"[A-Z]{2}[0-9]{2}(?:[ \\\\x{A0}]?[0-9A-Z]{4}){2,7}(?:[ \\\\x{A0}]?[0-9A-Z]{1,3})?\",\"replace\":\"[iban]\"},{\"id\":\"jwt\",\"pattern\":\"eyJ[A-Za-z0-9_-]{5,}\\\\.(?:[ \\\\t]*\\\\r?\\\\n[ \\\\t]*)?[A-Za-z0-9_-]{5,}\\\\.(?:[ \\\\t]*\\\\r?\\\\n[ \\\\t]*)?[A-Za-z0-9_-]{5,}\",\"replace\":\"[jwt]\"},{\"id\":\"national-id\",\"pattern\":\"(?:(?i:ssn|social[ _-]?security(?:[ _-]?(?:number|no\\\\.?|num))?|national[ _-]?insurance(?:[ _-]?(?:number|no\\\\.?))?|national[ _-]?id(?:entity|entification)?(?:[ _-]?(?:number|no\\\\.?|card))?|aadhaa?r(?:[ _-]?(?:number|no\\\\.?))?|personnummer|personal[ _-]?id(?:entity)?(?:[ _-]?(?:number|no\\\\.?|code))?|codice[ _-]fiscale|steuer[ _-]?id(?:entifikationsnummer)?|steuernummer|sozialversicherungsnummer|personalausweis(?:nummer)?|num[ée]ro de s[ée]curit[ée] sociale|tax[ _-]?(?:id|file)(?:[ _-]?(?:number|no\\\\.?))?|passport[ _-]?(?:number|no\\\\.?)|driver'?s?[ _-]?licen[cs]e[ _-]?(?:number|no\\\\.?)|tc[ _-]?kimlik(?:[ _-]?no)?|my[ _-]?number|pesel|curp|cpf|cnpj|dni|nie|nif|bsn|nric|hkid|nino|idnr))[ \\\\t]*(?:[:#=：][ \\\\t]*)?[0-9A-Z](?:[ ./-]?[0-9A-Z]){6,}\",\"replace\":\"[national id]\"},{\"id\":\"national-id-script\",\"pattern\":\"(?:(?:マイナンバー|個人番号|身份证(?:号码?)?|身分證(?:字號)?|주민등록번호|(?i:инн|снилс)|מספר זהות|תעודת זהות|رقم الهوية|کد ملی|आधार(?: स\u{902}ख\u{94d}या)?)[ \\\\t]*(?:[:#=：][ \\\\t]*)?|(?:SIN|PAN|TIN|ITIN|EIN|TFN|NIK|NIR|CNP|RFC)[ \\\\t]*[:#=：][ \\\\t]*)[0-9A-Z](?:[ ./-]?[0-9A-Z]){6,}\",\"replace\":\"[national id]\"},{\"id\":\"platform-token\",\"pattern\":\"lin_api_[A-Za-z0-9]{40}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|pul-[a-f0-9]{40}|gl(?:sa|c)_[A-Za-z0-9_+/=-]{32,}|sntry[su]_[A-Za-z0-9_+/=-]{40,}|hv[sb]\\\\.[A-Za-z0-9_-]{24,}|figd_[A-Za-z0-9_-]{40}|ATATT3[A-Za-z0-9_=-]{100,}|HRKU-[A-Za-z0-9_-]{36,}\",\"replace\":\"[api key]\"},{\"id\":\"private-key\",\"pattern\":\"(?s)[-\\\\x{2012}-\\\\x{2015}\\\\x{2212}\\\\x{FE58}\\\\x{FE63}\\\\x{FF0D}]{3,7} ?BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?[-\\\\x{2012}-\\\\x{2015}\\\\x{2212}\\\\x{FE58}\\\\x{FE63}\\\\x{FF0D}]{3,7}(?:.*?[-\\\\x{2012}-\\\\x{2015}\\\\x{2212}\\\\x{FE58}\\\\x{FE63}\\\\x{FF0D}]{3,7} ?END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?[-\\\\x{2012}-\\\\x{2015}\\\\x{2212}\\\\x{FE58}\\\\x{FE63}\\\\x{FF0D}]{3,7}|.*)\",\"replace\":\"[private key]\"},{\"id\":\"registry-token\",\"pattern\":\"npm_[A-Za-z0-9]{36}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}|hf_[A-Za-z0-9]{34,}\",\"replace\":\"[registry token]\"},{\"id\":\"service-api-key\",\"pattern\":\"SG\\\\.[A-Za-z0-9_-]{22}\\\\.[A-Za-z0-9_-]{43}|SK[0-9a-fA-F]{32}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}|dapi[a-f0-9]{32}|AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\",\"replace\":\"[api key]\"},{\"id\":\"slack-token\",\"pattern\":\"(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,}|(?:https?://)?hooks\\\\.slack\\\\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}\",\"replace\":\"[slack token]\"},{\"id\":\"stripe-key\",\"pattern\":\"(?:[sr]k_(?:live|test)|whsec)_[0-9A-Za-z]{16,247}\",\"replace\":\"[stripe key]\"},{\"id\":\"url-credentials\",\"pattern\":\"://[^\\\\s/?#@:]*:[^\\\\s/?#@]+@\",\"replace\":\":[credentials]@\"}]",
    "{\"one-time-code\":\"(?i:one[\\\\s_-]?time[\\\\s_-]?(?:code|password|passcode|pin)|two[\\\\s_-]?factor|verification[\\\\s_-]?code|security[\\\\s_-]?code|authentication[\\\\s_-]?code)|(?:^|[^A-Za-z0-9])(?:OTP|otp|Otp|2FA|2fa|MFA|mfa|Mfa)s?(?:$|[^a-z])|[a-z](?:Otp|OTP|Mfa|MFA)s?(?:$|[^a-z])\",\"passcode\":\"(?:(?:^|[^A-Za-z])(?i:p)|[a-z]P)(?i:ass[\\\\s_-]?codes?)|[A-Z]PASSCODE\",\"password\":\"(?:(?:^|[^A-Za-z])(?i:p)|[a-z]P)(?i:ass[\\\\s_-]?words?|asswort|assphrases?)|[A-Z]PASS(?:WORD|PHRASE)|(?i:mot de passe|contraseña|kennwort)\",\"pin\":\"(?:^|[^A-Z])PINS?(?:$|[^A-Z])|(?:^|[^A-Za-z])[Pp]in(?:_|[A-Z])|_[Pp]in(?:$|[^a-z])|[a-z]Pin(?:$|[^a-z])|(?:^|[^A-Za-z])(?i:pin)[\\\\s_-]?(?i:codes?|numbers?)\"}",
    "\"focus\"",
    "\"window\"",
    "\"app\"",
];

/// Per action (and every other), each per-request rule the default defines
/// with its value (an index into `JSON`).
pub(super) const PLANS: &[&[(&str, usize)]] = &[
    &[
        ("scope", 0),
        ("budget", 1),
        ("redact", 2),
        ("title_patterns", 3),
    ],
    &[
        ("scope", 4),
        ("budget", 1),
        ("redact", 2),
        ("title_patterns", 3),
    ],
    &[
        ("scope", 5),
        ("budget", 1),
        ("redact", 2),
        ("title_patterns", 3),
    ],
    &[
        ("scope", 6),
        ("budget", 1),
        ("redact", 2),
        ("title_patterns", 3),
    ],
    &[
        ("scope", 4),
        ("budget", 1),
        ("redact", 2),
        ("title_patterns", 3),
    ],
];
