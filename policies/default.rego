# ctxgate default policy.
#
# Contract (full text in policies/README.md). A policy is one or more .rego
# files in `package ctxgate`, Rego v1 syntax (regorus's default; `if` and
# `contains` are required, `import rego.v1` is accepted but not needed).
#
# Per request, input = {"action": {"name", "target"?}, "app": {"instance",
# "protocol", "title"?}}:
#   scope               "selection" | "focus" | "window" | "app"; undefined: "focus"
#   budget              {"tokens": N} or {"bytes": N}; undefined: no budget
#   redact              set of {"id", "pattern", "replace"?, "luhn"?}; applied
#                       natively to every string that leaves
#   title_patterns      object name -> regex; titles never reach Rego, the
#                       names of matching patterns do (input.element.title_matches)
#   element_attributes  set of attribute names whose values Rego may read
# Per element, input adds "element" = {role, subrole?, selected, focused,
# visible, hovered, has_title, has_content, attribute_names, attributes,
# title_matches} and "inside" = [{role, subrole?}, ...] (ancestors, nearest first):
#   deny, mask, keep, prune   partial sets of reason strings (rule ids)
#   priority                  a number, 0 when undefined; higher is kept first
#   strip                     partial set of attribute names removed from the
#                             element as sent (reported by name, never value)
# Precedence: deny > mask > keep > prune/scope > budget.
# Floor: an element whose subrole, role word outside the language or type/
# autocomplete attribute says secret (secure, password, pin, otp, cvv...: see
# `ctxgate policy doc`) is always masked (floor:secure-text), whatever this says.
#
# Every rule has a METADATA block: `ctxgate policy doc` turns them into the
# reviewer's table. Keep rules cheap: else-chains, no regex, no imports;
# refer to other rules as data.ctxgate.x.

package ctxgate

# METADATA
# title: Scope follows the action
# description: `selection` sends the selection and the focus path; `window` the
#   focused window; `app` everything; `focus` and any action ctxgate does not
#   know send the focused element's subtree and its path, the narrowest scope
#   that still shows the user's context.
scope := "selection" if {
	input.action.name == "selection"
} else := "window" if {
	input.action.name == "window"
} else := "app" if {
	input.action.name == "app"
} else := "focus"

# METADATA
# title: Default budget of 8000 tokens
# description: Fits a typical agent context with room for the task; a request
#   may ask for a smaller one. A request for more is capped at this budget,
#   with a warning in the report (`warnings`) and on stderr.
budget := {"tokens": 8000}

# METADATA
# title: Names of password-like titles
# description: Titles that mark a text as a secret, as words or inside
#   camelCase and snake_case names (`confirmPassword`, `user_pin`). Matched
#   natively; rules below see only the names. `pin` and the abbreviations need
#   a boundary on both sides (`PIN`, `pinCode`, `user_pin`, not `spinner`,
#   `Pinned` or `Pin to top`).
title_patterns := {
	"password": `(?:(?:^|[^A-Za-z])(?i:p)|[a-z]P)(?i:ass[\s_-]?words?|asswort|assphrases?)|[A-Z]PASS(?:WORD|PHRASE)|(?i:mot de passe|contraseña|kennwort)`,
	"passcode": `(?:(?:^|[^A-Za-z])(?i:p)|[a-z]P)(?i:ass[\s_-]?codes?)|[A-Z]PASSCODE`,
	"pin": `(?:^|[^A-Z])PINS?(?:$|[^A-Z])|(?:^|[^A-Za-z])[Pp]in(?:_|[A-Z])|_[Pp]in(?:$|[^a-z])|[a-z]Pin(?:$|[^a-z])|(?:^|[^A-Za-z])(?i:pin)[\s_-]?(?i:codes?|numbers?)`,
	"one-time-code": `(?i:one[\s_-]?time[\s_-]?(?:code|password|passcode|pin)|two[\s_-]?factor|verification[\s_-]?code|security[\s_-]?code|authentication[\s_-]?code)|(?:^|[^A-Za-z0-9])(?:OTP|otp|Otp|2FA|2fa|MFA|mfa|Mfa)s?(?:$|[^a-z])|[a-z](?:Otp|OTP|Mfa|MFA)s?(?:$|[^a-z])`,
}

# Redaction patterns. ctxgate delimits every match natively: a match that
# starts or ends inside a run of ASCII letters and digits is not a secret, and
# anything else (CJK, punctuation, `_`, emoji, line breaks) delimits one. So
# these patterns use no `\b`, which is Unicode-aware and sees no boundary
# between kana and a digit. Replacements are literal and no pattern may match
# one. Formats follow gitleaks, trufflehog and GitHub secret scanning.

# METADATA
# title: Redact payment card numbers
# description: A run of digits (any script: ASCII, fullwidth, Arabic-Indic...)
#   grouped by spaces, no-break or thin spaces, tabs, line breaks (a number
#   wrapped in a narrow field), hyphens, en and em dashes, dots, slashes,
#   CJK middle dots and long vowel marks (`・`, `‧`, `ー`) or `+` (a url's
#   encoded space); other spaces and dashes, invisible characters and
#   encoded separators (`%C2%A0`, `&#x2009;`, `&nbsp;`) ctxgate reads as a
#   person does before matching.
#   ctxgate tries every window of 13 to 19 digits made of whole groups (each
#   of at least 3 digits when there are several) and replaces the windows
#   that pass the Luhn check, so a quantity, a year, an expiry or a CVV next
#   to the number does not hide it.
redact contains {
	"id": "card-number",
	"pattern": `\d+(?:[-./+ \t\r\n\x{A0}\x{2007}\x{2009}\x{202F}\x{3000}\x{2010}-\x{2015}\x{2027}\x{30FB}\x{30FC}\x{FF0D}\x{FF0F}\x{FF65}\x{FF70}]{1,3}\d+)*`,
	"replace": "[card number]",
	"luhn": true,
}

# METADATA
# title: Redact AWS access key ids
# description: AKIA (long-term), ASIA (temporary), ABIA and ACCA key ids.
redact contains {
	"id": "aws-access-key",
	"pattern": `(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}`,
	"replace": "[aws key]",
}

# METADATA
# title: Redact Azure storage account keys
# description: The `AccountKey=` of a connection string (88 base64 characters).
redact contains {
	"id": "azure-storage-key",
	"pattern": `AccountKey=[A-Za-z0-9+/]{86}==`,
	"replace": "AccountKey=[azure key]",
}

# METADATA
# title: Redact GitHub tokens
# description: Personal, OAuth, user-to-server, server-to-server and refresh
#   tokens (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained tokens (github_pat_).
redact contains {
	"id": "github-token",
	"pattern": `gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}`,
	"replace": "[github token]",
}

# METADATA
# title: Redact GitLab tokens
# description: Personal, pipeline trigger, runner, deploy, feed, incoming mail,
#   OAuth application, CI build, SCIM and agent tokens (glpat-, glptt-, glrt-,
#   gldt-, glft-, glimt-, gloas-, glcbt-, glsoat-, glagent-).
redact contains {
	"id": "gitlab-token",
	"pattern": `gl(?:pat|ptt|rt|dt|ft|imt|oas|cbt|soat|agent)-[0-9A-Za-z_-]{20,}`,
	"replace": "[gitlab token]",
}

# METADATA
# title: Redact Slack tokens and webhooks
# description: Bot, user, app-level, refresh, config and legacy tokens (xoxb-,
#   xoxp-, xapp-, xoxr-, xoxe-, xoxo-, xoxa-, xoxs-) and incoming webhook urls.
redact contains {
	"id": "slack-token",
	"pattern": `(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,}|(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}`,
	"replace": "[slack token]",
}

# METADATA
# title: Redact Stripe secret keys
# description: Live and test secret keys (sk_live_, sk_test_), restricted keys
#   (rk_live_, rk_test_) and webhook signing secrets (whsec_). Publishable
#   keys (pk_) are public and stay.
redact contains {
	"id": "stripe-key",
	"pattern": `(?:[sr]k_(?:live|test)|whsec)_[0-9A-Za-z]{16,247}`,
	"replace": "[stripe key]",
}

# METADATA
# title: Redact OpenAI and Anthropic API keys
# description: Keys starting sk- (including sk-proj- and sk-ant-).
redact contains {
	"id": "ai-api-key",
	"pattern": `sk-[A-Za-z0-9_-]{20,}`,
	"replace": "[api key]",
}

# METADATA
# title: Redact Google API keys and OAuth secrets
# description: API keys (AIza), OAuth client secrets (GOCSPX-) and access
#   tokens (ya29.).
redact contains {
	"id": "google-api-key",
	"pattern": `AIza[0-9A-Za-z_-]{35}|GOCSPX-[0-9A-Za-z_-]{28}|ya29\.[0-9A-Za-z_-]{20,}`,
	"replace": "[google api key]",
}

# METADATA
# title: Redact package registry tokens
# description: npm (npm_), PyPI (pypi-AgEIcHlwaS5vcmc...) and Hugging Face
#   (hf_) tokens.
redact contains {
	"id": "registry-token",
	"pattern": `npm_[A-Za-z0-9]{36}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}|hf_[A-Za-z0-9]{34,}`,
	"replace": "[registry token]",
}

# METADATA
# title: Redact service API keys
# description: SendGrid (SG.), Twilio (SK + 32 hex), Shopify (shpat_, shpca_,
#   shppa_, shpss_), DigitalOcean (dop_v1_, doo_v1_, dor_v1_), Databricks
#   (dapi) and age secret keys.
redact contains {
	"id": "service-api-key",
	"pattern": `SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|SK[0-9a-fA-F]{32}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}|dapi[a-f0-9]{32}|AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`,
	"replace": "[api key]",
}

# METADATA
# title: Redact JSON web tokens
# description: Three base64url parts separated by dots, the first starting
#   eyJ; a line break after a dot (a token wrapped in a narrow view) joins.
redact contains {
	"id": "jwt",
	"pattern": `eyJ[A-Za-z0-9_-]{5,}\.(?:[ \t]*\r?\n[ \t]*)?[A-Za-z0-9_-]{5,}\.(?:[ \t]*\r?\n[ \t]*)?[A-Za-z0-9_-]{5,}`,
	"replace": "[jwt]",
}

# METADATA
# title: Redact bearer tokens
# description: The credential after `Bearer` in an authorization header or
#   anywhere in text.
redact contains {
	"id": "bearer-token",
	"pattern": `(?i)bearer\s+[A-Za-z0-9._~+/-]{16,}=*`,
	"replace": "Bearer [token]",
}

# METADATA
# title: Redact basic authorization credentials
# description: An `Authorization: Basic` header with its base64 user and
#   password (also `Proxy-Authorization`), as a curl command or a log shows
#   it: the header's name and scheme go with it.
redact contains {
	"id": "basic-auth",
	"pattern": `(?i)authorization["']?[ \t]*[:=]?[ \t]*["']?basic[ \t]+[A-Za-z0-9+/]{4,}={0,2}`,
	"replace": "[basic credentials]",
}

# METADATA
# title: Redact credentials in urls
# description: The user and password of a url (`https://user:pass@host`,
#   `postgres://app:pw@db/x`, `https://:token@host`); the scheme, host and path
#   stay. A url with a user and no password (`ssh://git@host`) stays.
redact contains {
	"id": "url-credentials",
	"pattern": `://[^\s/?#@:]*:[^\s/?#@]+@`,
	"replace": ":[credentials]@",
}

# METADATA
# title: Redact credentials assigned in text
# description: A value given to a key named as a secret, as configuration
#   files, environment variables, connection strings, query strings and
#   command lines write it (`DB_PASSWORD=...`, `password: ...`,
#   `"api_key": "..."`, `AWS_SECRET_ACCESS_KEY=...`, `Pwd=...;`,
#   `?access_token=...`, `Passcode: ...`, `PIN: 1234`): key, separator and
#   value are replaced. Keys: password, passwd, pwd, passphrase, passcode,
#   secret, secret (access) key, api key, client secret and auth, access,
#   refresh or api token, with a value of at least 4 chars; pin, with at
#   least 4 digits (`Pin: Home` stays). A key stands alone or after `_`,
#   `.`, `-` or anything but an ASCII letter or digit (`DB_PASSWORD`,
#   `jdbc.password`), or glued to the letters before it (`dbPassword`,
#   `MYSQLPWD`, `userPin`; `pwd` and `pin` only after a lowercase letter or
#   in capitals, so `spin: 1234` stays). The value is a quoted string or
#   everything up to a space, quote or angle bracket (`Password: Show` is
#   replaced too: the safe error). A value that is a setting word (`true`,
#   `false`, `yes`, `no`, `on`, `off`, `null`, `none`, `nil`, `undefined`,
#   quoted or not: `reset_password: true`) is a setting and stays
#   (`"assigned": true`); `password: true1234` is replaced.
redact contains {
	"id": "credential-assignment",
	"pattern": `(?-u:[A-Za-z0-9]*(?i:passw(?:or)?d|passphrase|passcode|secret(?:[_-]?access)?[_-]?key|client[_-]?secret|secret|api_?key|api-key|(?:auth|access|refresh)[_-]?token|api_?token|api-token)|(?:[A-Za-z0-9]*[a-z0-9])?Pwd|[A-Z0-9]*PWD|(?i:pwd))["']?[ \t]*(?::=|=>|:|=)[ \t]*(?:"[^"\r\n]{4,}"|'[^'\r\n]{4,}'|[^\s"'<>]{4,})|(?-u:(?:[A-Za-z0-9]*[a-z0-9])?Pin|[A-Z0-9]*PIN|(?i:pin))["']?[ \t]*(?::=|=>|:|=)[ \t]*(?:"[0-9]{4,}"|'[0-9]{4,}'|[0-9]{4,})`,
	"replace": "[credential]",
	"assigned": true,
}

# METADATA
# title: Redact tokens and keys assigned in text
# description: A value of at least 8 chars given to a token, a credential
#   or a private key of any name (`GITHUB_TOKEN=...`, `bearer_token: ...`,
#   `csrfToken=...`, `credentials: ...`, `private_key=...`), key, separator
#   and value, the key read as `credential-assignment` reads one; a shorter
#   value stays (`max_token: 4096`). A pattern of its own: joined to
#   `credential-assignment`'s, the two are a DFA too large to build ahead.
redact contains {
	"id": "token-assignment",
	"pattern": `(?-u:[A-Za-z0-9]*(?i:token|credentials?|private[_-]?key))["']?[ \t]*(?::=|=>|:|=)[ \t]*(?:"[^"\r\n]{8,}"|'[^'\r\n]{8,}'|[^\s"'<>]{8,})`,
	"replace": "[credential]",
	"assigned": true,
}

# METADATA
# title: Redact PEM private keys
# description: Everything from a BEGIN ... PRIVATE KEY line (RSA, EC, DSA,
#   OPENSSH, ENCRYPTED, plain PKCS#8, PGP ... KEY BLOCK) to its END line, or
#   to the end of the text when there is none (an editor showing the top of a
#   key file). The dashes may be 3 to 7, hyphens or typographic dashes
#   (`‒ – — ― −`), with a space before or after the words.
redact contains {
	"id": "private-key",
	"pattern": `(?s)[-\x{2012}-\x{2015}\x{2212}\x{FE58}\x{FE63}\x{FF0D}]{3,7} ?BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?[-\x{2012}-\x{2015}\x{2212}\x{FE58}\x{FE63}\x{FF0D}]{3,7}(?:.*?[-\x{2012}-\x{2015}\x{2212}\x{FE58}\x{FE63}\x{FF0D}]{3,7} ?END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?[-\x{2012}-\x{2015}\x{2212}\x{FE58}\x{FE63}\x{FF0D}]{3,7}|.*)`,
	"replace": "[private key]",
}

# METADATA
# title: Redact authorization headers of any scheme
# description: `Authorization:` (and `Proxy-Authorization:`) with any scheme
#   but Bearer and Basic, which their own rules keep readable (Token, Digest,
#   AWS4-HMAC-SHA256, ApiKey, Negotiate, any word) and credentials whose
#   first word holds a digit or `=` (`Authorization: required` is prose),
#   or with a bare token of 12 chars or more: header name, scheme and
#   credentials to the end of the line are replaced.
redact contains {
	"id": "authorization-header",
	"pattern": `(?i:(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:[ac-z0-9_][a-z0-9_-]*|b(?:[b-df-z0-9_-][a-z0-9_-]*|a(?:[a-rt-z0-9_-][a-z0-9_-]*|s(?:[a-hj-z0-9_-][a-z0-9_-]*|i(?:[abd-z0-9_-][a-z0-9_-]*|c[a-z0-9_-]+)?)?)?|e(?:[b-z0-9_-][a-z0-9_-]*|a(?:[a-qs-z0-9_-][a-z0-9_-]*|r(?:[a-df-z0-9_-][a-z0-9_-]*|e(?:[a-qs-z0-9_-][a-z0-9_-]*|r[a-z0-9_-]+)?)?)?)?)?)[ \t]+[a-z._~+/,:"-]*[0-9=][^\r\n]*|[a-z0-9._~+/-]{12,}=*))`,
	"replace": "[auth header]",
}

# METADATA
# title: Redact cookie headers
# description: A `Cookie:` or `Set-Cookie:` header holding a name=value
#   pair: the whole header to the end of the line (session cookies,
#   their attributes and every other cookie on it).
redact contains {
	"id": "cookie-header",
	"pattern": `(?i:(?:set-)?cookie)["']?[ \t]*:[ \t]*["']?[^\s;=,"']+=[^\r\n]*`,
	"replace": "[header withheld]",
}

# METADATA
# title: Redact session ids
# description: A value of at least 8 chars given to a session cookie or
#   parameter (`sessionid=`, `PHPSESSID=`, `JSESSIONID=`, `connect.sid=`,
#   `laravel_session=`, `_gh_sess=`, `session_id: ...`, `sid=`); a setting
#   word stays.
redact contains {
	"id": "session-id",
	"pattern": `(?i:(?:[a-z0-9]+[_.-])*(?:session(?:[_-]?id)?|sess(?:[_-]?id)?|sid|ssid|phpsessid|jsessionid|asp\.net_sessionid|connect\.sid))["']?[ \t]*[:=][ \t]*["']?[A-Za-z0-9%._~+/:-]{8,}=*`,
	"replace": "[login state]",
	"assigned": true,
}

# METADATA
# title: Redact labelled national id numbers
# description: A national id, tax or social security number after its label,
#   in Latin script (`SSN: 123-45-6789`, `Social Security Number`,
#   `National Insurance number`, `Aadhaar`, `CPF`, `DNI`, `PESEL`, `BSN`,
#   `personnummer`, `codice fiscale`, `Steuer-ID`, `numéro de sécurité
#   sociale`, `TC Kimlik No`, passport and driver's
#   licence numbers): 7 or more capital letters and digits, single spaces,
#   dots, slashes or hyphens between them.
redact contains {
	"id": "national-id",
	"pattern": `(?:(?i:ssn|social[ _-]?security(?:[ _-]?(?:number|no\.?|num))?|national[ _-]?insurance(?:[ _-]?(?:number|no\.?))?|national[ _-]?id(?:entity|entification)?(?:[ _-]?(?:number|no\.?|card))?|aadhaa?r(?:[ _-]?(?:number|no\.?))?|personnummer|personal[ _-]?id(?:entity)?(?:[ _-]?(?:number|no\.?|code))?|codice[ _-]fiscale|steuer[ _-]?id(?:entifikationsnummer)?|steuernummer|sozialversicherungsnummer|personalausweis(?:nummer)?|num[ée]ro de s[ée]curit[ée] sociale|tax[ _-]?(?:id|file)(?:[ _-]?(?:number|no\.?))?|passport[ _-]?(?:number|no\.?)|driver'?s?[ _-]?licen[cs]e[ _-]?(?:number|no\.?)|tc[ _-]?kimlik(?:[ _-]?no)?|my[ _-]?number|pesel|curp|cpf|cnpj|dni|nie|nif|bsn|nric|hkid|nino|idnr))[ \t]*(?:[:#=：][ \t]*)?[0-9A-Z](?:[ ./-]?[0-9A-Z]){6,}`,
	"replace": "[national id]",
}

# METADATA
# title: Redact national id numbers labelled in other scripts or in short
# description: The same, after a label in another script (`マイナンバー`,
#   `個人番号`, `身份证号`, `주민등록번호`, `ИНН`, `СНИЛС`, `תעודת זהות`,
#   `رقم الهوية`, `کد ملی`, `आधार`) or a short capital label with a `:`,
#   `#` or `=` (`SIN`, `PAN`, `TIN`, `EIN`, `TFN`, `NIK`, `NIR`, `CNP`).
redact contains {
	"id": "national-id-script",
	"pattern": `(?:(?:マイナンバー|個人番号|身份证(?:号码?)?|身分證(?:字號)?|주민등록번호|(?i:инн|снилс)|מספר זהות|תעודת זהות|رقم الهوية|کد ملی|आधार(?: संख्या)?)[ \t]*(?:[:#=：][ \t]*)?|(?:SIN|PAN|TIN|ITIN|EIN|TFN|NIK|NIR|CNP|RFC)[ \t]*[:#=：][ \t]*)[0-9A-Z](?:[ ./-]?[0-9A-Z]){6,}`,
	"replace": "[national id]",
}

# METADATA
# title: Redact IBANs
# description: A bank account number in IBAN form (two letters, two check
#   digits, up to 30 letters and digits, grouped by spaces or not) whose
#   check digits pass ISO 7064 mod 97 (`"mod97": true`), as cards pass Luhn;
#   the longest prefix that passes is replaced.
redact contains {
	"id": "iban",
	"pattern": `[A-Z]{2}[0-9]{2}(?:[ \x{A0}]?[0-9A-Z]{4}){2,7}(?:[ \x{A0}]?[0-9A-Z]{1,3})?`,
	"replace": "[iban]",
	"mod97": true,
}

# METADATA
# title: Redact AWS secret access keys beside their key id
# description: 40 base64 chars after an access key id (`AKIA…` and a comma,
#   a tab, a colon or spaces: a credentials CSV, a console line) or after a
#   `secret access key` label written with spaces.
redact contains {
	"id": "aws-secret-key",
	"pattern": `(?:AKIA|ASIA)[0-9A-Z]{16}["']?[\s,;:|=]{1,6}["']?[A-Za-z0-9/+]{40}|(?i:secret[ _-]?access[ _-]?key)["']?[\s:=|,]{1,6}["']?[A-Za-z0-9/+]{40}`,
	"replace": "[aws credentials]",
}

# METADATA
# title: Redact chat bot tokens and webhooks
# description: Telegram bot tokens (in `api.telegram.org/bot<id>:<token>`
#   urls or alone), Discord webhook urls and Microsoft Teams incoming
#   webhooks.
redact contains {
	"id": "chat-bot-token",
	"pattern": `bot[0-9]{5,12}:[A-Za-z0-9_-]{30,50}|[0-9]{8,12}:AA[A-Za-z0-9_-]{30,40}|discord(?:app)?\.com/api/webhooks/[0-9]{15,21}/[A-Za-z0-9_-]{30,100}|webhook\.office\.com/webhookb2/[A-Za-z0-9@/._-]{30,}`,
	"replace": "[bot token]",
}

# METADATA
# title: Redact signatures in signed urls
# description: The signature and credential parameters of signed urls
#   (`X-Amz-Signature=`, `X-Amz-Credential=`, `X-Amz-Security-Token=`,
#   `X-Goog-Signature=`, `sig=`, `signature=`), up to the next `&`.
redact contains {
	"id": "signed-url",
	"pattern": `(?i:x-(?:amz|goog)-(?:signature|credential|security-token)|sig|signature)=[^&#\s"'<>]{4,}`,
	"replace": "[query credential]",
	"assigned": true,
}

# METADATA
# title: Redact credentials given as command-line flags
# description: The value of a `--password`, `--passwd`, `--pass`,
#   `--token`, `--secret`, `--api-key` or `--credentials` flag (any prefix:
#   `--db-password`, `--client-secret`), given with `=` or a space.
redact contains {
	"id": "cli-credential",
	"pattern": `--(?:[a-z0-9]+-)*(?:password|passwd|pass|pwd|token|secret|api-?key|apikey|credentials?)(?:=|[ \t]+)["']?[^\s"'-][^\s"']*`,
	"replace": "[credential]",
}

# METADATA
# title: Redact passwords given to database and shell commands
# description: `-p` after mysql, mariadb, mysqldump, mysqladmin, mysqlsh or
#   sshpass (`-phunter2`, `-p hunter2`), `-a` after redis-cli, and
#   `-u user:pass`, `--user user:pass` after curl: the command up to the
#   value goes with it.
redact contains {
	"id": "cli-password",
	"pattern": `(?:mysql[a-z-]*|mariadb[a-z-]*|sshpass)(?:[ \t]+[^\s|;&]+)*?[ \t]+-p[ \t]*[^\s-][^\s]*|redis-cli(?:[ \t]+[^\s|;&]+)*?[ \t]+-a[ \t]*[^\s-][^\s]*|curl(?:[ \t]+[^\s|;&]+)*?[ \t]+(?:-u|--user|--proxy-user)[ \t=]*["']?[^\s:"']*:[^\s"']+`,
	"replace": "[credential]",
}

# METADATA
# title: Redact passwords assigned in other languages (Latin script)
# description: A value given to a password's name in the Latin-script
#   languages UIs are written in (`Passwort`, `Kennwort`, `contraseña`,
#   `clave`, `mot de passe`, `senha`, `wachtwoord`, `hasło`, `lösenord`,
#   `şifre`, `parola`, `mật khẩu`, `kata sandi`...), or to a `pass` key
#   after a prefix (`DB_PASS`, `smtp.pass`), with `:`, `=` or the fullwidth
#   `：`; a setting word stays. Any value length: the safe error.
redact contains {
	"id": "password-assignment",
	"pattern": `(?:(?i:passwort|kennwort|clave|mot[ _-]?de[ _-]?passe|senha|palavra-passe|wachtwoord|has(?:ł|l)o|l(?:ö|o)senord|adgangskode|passord|salasana|heslo|parola|(?:ş|s)ifre|kata[ _-]?sandi|contrase(?:ñ|n)a|jelsz(?:ó|o)|m(?:ậ|a)t[ _-]?kh(?:ẩ|a)u)|(?-u:(?:[A-Za-z0-9]+[_.-])+(?:PASS|[Pp]ass)))["']?[ \t]*(?::=|=>|:|=|：)[ \t]*(?:"[^"\r\n]+"|'[^'\r\n]+'|[^\s"'<>]+)`,
	"replace": "[credential]",
	"assigned": true,
}

# METADATA
# title: Redact passwords assigned in other scripts
# description: The same for the names of a password in Cyrillic, Greek,
#   Chinese, Japanese, Korean, Thai, Arabic, Persian, Hebrew, Hindi and
#   Bengali (`пароль`, `κωδικός`, `密码`, `パスワード`, `비밀번호`, `รหัสผ่าน`,
#   `كلمة المرور`, `رمز عبور`, `סיסמה`, `पासवर्ड`, `পাসওয়ার্ড`).
redact contains {
	"id": "password-assignment-script",
	"pattern": `(?:пароль|Пароль|ПАРОЛЬ|лозинка|Лозинка|κωδικός|Κωδικός|ΚΩΔΙΚΌΣ|密码|密碼|口令|パスワード|暗証番号|비밀번호|암호|รหัสผ่าน|كلمة المرور|كلمة السر|رمز عبور|گذرواژه|סיסמה|סיסמא|पासवर्ड|পাসওয়ার্ড)["']?[ \t]*(?::=|=>|:|=|：)[ \t]*(?:"[^"\r\n]+"|'[^'\r\n]+'|[^\s"'<>]+)`,
	"replace": "[credential]",
	"assigned": true,
}

# METADATA
# title: Redact developer platform tokens
# description: Linear (lin_api_), Postman (PMAK-), Pulumi (pul-), Grafana
#   (glsa_, glc_), Sentry (sntrys_, sntryu_), HashiCorp Vault (hvs., hvb.),
#   Figma (figd_), Atlassian (ATATT3) and Heroku (HRKU-) tokens.
redact contains {
	"id": "platform-token",
	"pattern": `lin_api_[A-Za-z0-9]{40}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|pul-[a-f0-9]{40}|gl(?:sa|c)_[A-Za-z0-9_+/=-]{32,}|sntry[su]_[A-Za-z0-9_+/=-]{40,}|hv[sb]\.[A-Za-z0-9_-]{24,}|figd_[A-Za-z0-9_-]{40}|ATATT3[A-Za-z0-9_=-]{100,}|HRKU-[A-Za-z0-9_-]{36,}`,
	"replace": "[api key]",
}

# METADATA
# title: Redact cloud service tokens
# description: PlanetScale (pscale_tkn_, pscale_pw_), Supabase (sbp_),
#   Doppler (dp.pt., dp.st., dp.sa., dp.ct.), Square (sq0atp-, sq0csp-),
#   Brevo (xkeysib-), New Relic (NRAK-) and Mailgun (key- and 32 hex) keys.
redact contains {
	"id": "cloud-service-token",
	"pattern": `pscale_(?:tkn|pw)_[A-Za-z0-9_.-]{32,}|sbp_[a-f0-9]{40}|dp\.(?:pt|st|sa|ct)\.[A-Za-z0-9]{40,}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}|xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}|NRAK-[A-Z0-9]{27}|key-[0-9a-f]{32}`,
	"replace": "[api key]",
}

# METADATA
# title: Mask secure text
# description: Text whose subrole says secure or password (AXSecureTextField).
#   The floor does the same; this rule names it in reports even if the floor
#   changes.
mask contains "secure-text" if {
	input.element.role == "Text"
	some word in {"secure", "password"}
	contains(lower(input.element.subrole), word)
}

# METADATA
# title: Mask text titled like a secret
# description: Text, and a Cell or Group (a provider's unknown role, such as
#   a `TextField`, is read as Group) that carries content of its own, whose
#   title matches the password, passcode, PIN or one-time-code pattern: sent
#   as a placeholder (id, role, subrole, states, and whether it is empty),
#   without its title or content.
mask contains "secret-title" if {
	secret_title_role
	input.element.title_matches[_] in {"password", "passcode", "pin", "one-time-code"}
}

# METADATA
# title: Roles a secret title masks
# description: Text always; a Cell or Group only when it carries content of
#   its own (a container titled like a secret holds more than the secret).
secret_title_role if input.element.role == "Text"

# METADATA
# title: Roles a secret title masks
# description: A Cell or Group (unknown roles included) with content.
secret_title_role if {
	input.element.role in {"Cell", "Group"}
	input.element.has_content
}

# METADATA
# title: Prune what is not visible
# description: An element that is not visible, and so its subtree, is not sent
#   unless a keep, mask or deny rule speaks for it.
prune contains "invisible" if {
	not input.element.visible
}

# METADATA
# title: Keep the focus path
# description: The focused element and every ancestor on the focus path (they
#   are focused too, RFC-0001 4.1).
keep contains "focus-path" if {
	input.element.focused
}

# METADATA
# title: Keep the selection
# description: Selected elements, whatever the scope.
keep contains "selection" if {
	input.element.selected
}

# METADATA
# title: Keep the enclosing document
# description: For `selection` and `focus`, a Document that is on the focus
#   path, is selected, or has the selection inside it
#   (`input.element.contains_selection`): sent whole, not as a skeleton.
keep contains "enclosing-document" if {
	input.element.role == "Document"
	input.action.name in {"selection", "focus"}
	on_focus_or_selected
}

# METADATA
# title: On the focus path or at the selection (helper)
# description: True for an element that is focused, selected, or has the
#   selection inside it.
on_focus_or_selected if input.element.focused

on_focus_or_selected if input.element.selected

on_focus_or_selected if input.element.contains_selection

# METADATA
# title: Strip authors from wide context
# description: RFC-0001 section 6: `author` attaches a person's name to
#   content, and a host sends only what the user's action warrants. For
#   `selection` and `focus` (and actions ctxgate does not know, scoped as
#   `focus`) the scope is what the user is looking at, so its authors are
#   kept. For `window` and `app` the scope is every thread and comment on
#   screen or open: `author` is stripped there, except on the element the
#   user is at (focused, selected, or holding the selection), which the user
#   is looking at. The element itself is still sent. The RFC marks no other
#   attribute as sensitive: `related` (ids and addresses, like `url`) and
#   the provider's own attributes are sent, their values redacted.
strip contains "author" if {
	input.action.name in {"window", "app"}
	"author" in input.element.attribute_names
	not on_focus_or_selected
}

# METADATA
# title: Priority favours the window's outline and what is near the user
# description: Headings 110, wherever they are (the window's outline is
#   context for every position in it: a heading ten rings from the user,
#   110 - 69, still comes before a sibling link, 40); focused 100, selected
#   90, hovered 80; windows, documents and pages 50; links 40; text and
#   images 30; rows and lists 20; cells deep in a table (more than 6
#   ancestors) -10; the rest 0.
priority := 110 if {
	input.element.role == "Heading"
} else := 100 if {
	input.element.focused
} else := 90 if {
	input.element.selected
} else := 80 if {
	input.element.hovered
} else := 50 if {
	input.element.role in {"Window", "Document", "Page"}
} else := 40 if {
	input.element.role == "Link"
} else := 30 if {
	input.element.role in {"Text", "Image"}
} else := 20 if {
	input.element.role in {"Row", "List"}
} else := -10 if {
	input.element.role == "Cell"
	count(input.inside) > 6
} else := 0
