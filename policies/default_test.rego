# Tests of policies/default.rego: `ctxgate policy test policies/`
# (or `ctxgate policy test` for the embedded copy). Each test_* rule must be true.

package ctxgate

el(over) := object.union(
	{
		"role": "Group", "selected": false, "focused": false, "visible": true,
		"hovered": false, "has_title": true, "has_content": false,
		"attribute_names": [], "attributes": {}, "title_matches": [],
	},
	over,
)

req(action, over) := {
	"action": {"name": action},
	"app": {"instance": "test", "protocol": "0.2.0"},
	"element": el(over),
	"inside": [{"role": "Window"}, {"role": "Application"}],
}

test_scope_follows_the_action if {
	scope == "selection" with input as req("selection", {})
	scope == "focus" with input as req("focus", {})
	scope == "window" with input as req("window", {})
	scope == "app" with input as req("app", {})
}

test_unknown_action_scopes_to_focus if {
	scope == "focus" with input as req("summarize", {})
}

test_budget_is_8000_tokens if {
	budget == {"tokens": 8000}
}

test_secure_text_is_masked if {
	"secure-text" in mask with input as req("focus", {"role": "Text", "subrole": "AXSecureTextField"})
}

test_password_subrole_is_masked if {
	"secure-text" in mask with input as req("focus", {"role": "Text", "subrole": "Password"})
}

test_plain_text_is_not_masked if {
	count(mask) == 0 with input as req("focus", {"role": "Text"})
}

test_text_titled_like_a_secret_is_masked if {
	every name in ["password", "passcode", "pin", "one-time-code"] {
		"secret-title" in mask with input as req("focus", {"role": "Text", "title_matches": [name]})
	}
}

test_a_cell_or_group_with_content_titled_like_a_secret_is_masked if {
	every role in ["Cell", "Group"] {
		"secret-title" in mask with input as req("focus", {"role": role, "has_content": true, "title_matches": ["password"]})
		count(mask) == 0 with input as req("focus", {"role": role, "has_content": false, "title_matches": ["password"]})
	}
	count(mask) == 0 with input as req("focus", {"role": "Row", "has_content": true, "title_matches": ["password"]})
}

test_invisible_is_pruned if {
	"invisible" in prune with input as req("app", {"visible": false})
	count(prune) == 0 with input as req("app", {})
}

test_focus_path_and_selection_are_kept if {
	"focus-path" in keep with input as req("window", {"focused": true})
	"selection" in keep with input as req("window", {"selected": true})
	count(keep) == 0 with input as req("window", {})
}

test_enclosing_document_kept_for_selection_and_focus if {
	"enclosing-document" in keep with input as req("selection", {"role": "Document", "focused": true})
	"enclosing-document" in keep with input as req("focus", {"role": "Document", "selected": true})
	not "enclosing-document" in keep with input as req("app", {"role": "Document", "focused": true})
	not "enclosing-document" in keep with input as req("focus", {"role": "Document"})
}

test_priority_favours_the_user if {
	priority == 100 with input as req("focus", {"focused": true, "selected": true})
	priority == 90 with input as req("focus", {"selected": true})
	priority == 80 with input as req("focus", {"hovered": true})
	priority == 110 with input as req("focus", {"role": "Heading"})
	priority == 110 with input as req("focus", {"role": "Heading", "hovered": true})
	priority == 0 with input as req("focus", {})
}

test_deep_cells_rank_low if {
	deep := object.union(req("app", {"role": "Cell"}), {"inside": [
		{"role": "Row"}, {"role": "Table"}, {"role": "Group"}, {"role": "Group"},
		{"role": "Document"}, {"role": "Window"}, {"role": "Application"},
	]})
	priority == -10 with input as deep
}

test_redactions_have_ids_and_patterns if {
	ids := {r.id | some r in redact}
	ids == {
		"card-number", "aws-access-key", "azure-storage-key", "github-token", "gitlab-token",
		"slack-token", "stripe-key", "ai-api-key", "google-api-key", "registry-token",
		"service-api-key", "jwt", "bearer-token", "private-key", "basic-auth", "url-credentials",
		"credential-assignment", "token-assignment", "authorization-header", "cookie-header",
		"session-id", "national-id", "national-id-script", "iban", "aws-secret-key",
		"chat-bot-token", "signed-url", "cli-credential", "cli-password", "password-assignment",
		"password-assignment-script", "platform-token", "cloud-service-token",
	}
	every r in redact {
		is_string(r.pattern)
	}
}

test_ibans_are_mod97_checked if {
	some r in redact
	r.id == "iban"
	r.mod97 == true
}

test_settings_that_name_a_secret_are_not_secrets if {
	every text in ["reset_password: true", "show_password=false", "secretKey: null", "require_secret: none"] {
		regex.match(pattern_of("credential-assignment"), text)
	}
	every id in ["credential-assignment", "token-assignment", "password-assignment", "session-id"] {
		some r in redact
		r.id == id
		r.assigned == true
	}
}

test_card_numbers_are_luhn_checked if {
	some r in redact
	r.id == "card-number"
	r.luhn == true
}

test_document_enclosing_the_selection_is_kept_for_selection if {
	"enclosing-document" in keep with input as {
		"action": {"name": "selection"},
		"element": {"role": "Document", "selected": false, "focused": false, "visible": true, "hovered": false, "contains_selection": true, "title_matches": []},
		"inside": [],
	}
}

test_document_enclosing_the_selection_is_not_kept_for_app if {
	not "enclosing-document" in keep with input as {
		"action": {"name": "app"},
		"element": {"role": "Document", "selected": false, "focused": false, "visible": true, "hovered": false, "contains_selection": true, "title_matches": []},
		"inside": [],
	}
}

# ctxgate delimits redaction matches natively (ASCII letters and digits only);
# `\b` is Unicode-aware and would see no boundary between kana and a key.
test_redaction_patterns_use_no_word_boundary if {
	every r in redact {
		not contains(r.pattern, `\b`)
	}
}

# Title patterns are matched natively with the same regex crate regorus uses,
# so these checks hold for ctxgate too.
title_cases := {
	"password": {
		"yes": ["Password", "Confirm password", "confirmPassword", "user_password", "NEW_PASSWORD", "Passwortfeld", "Pass word", "passphrase", "Mot de passe", "Contraseña"],
		"no": ["Compass words", "Passenger", "Bypass"],
	},
	"passcode": {
		"yes": ["Passcode", "devicePasscode", "pass_code", "PASSCODE"],
		"no": ["Compass code"],
	},
	"pin": {
		"yes": ["Enter PIN", "PIN:", "userPIN", "user_pin", "pin_code", "pinCode", "newPin", "Pin number", "pincode", "PINs"],
		"no": ["Pin to top", "spinner", "Shipping", "Pinned", "OPINION", "PINE", "pin"],
	},
	"one-time-code": {
		"yes": ["One-time code", "oneTimeCode", "one_time_password", "OTP", "otpCode", "user_otp", "2FA code", "twoFactor", "verification_code", "securityCode", "MFA"],
		"no": ["Hotpot", "Otter", "Security settings"],
	},
}

test_title_patterns_match_words_and_identifiers if {
	every name, cases in title_cases {
		every title in cases.yes {
			regex.match(title_patterns[name], title)
		}
		every title in cases.no {
			not regex.match(title_patterns[name], title)
		}
	}
}

# `author` (RFC-0001 section 6): kept where the action is what the user looks
# at, stripped from window- and app-wide context except where the user is.
test_author_is_kept_for_selection_and_focus if {
	by_ada := {"role": "Row", "attribute_names": ["author"]}
	count(strip) == 0 with input as req("selection", by_ada)
	count(strip) == 0 with input as req("focus", by_ada)
	count(strip) == 0 with input as req("summarize", by_ada)
}

test_author_is_stripped_from_window_and_app_context if {
	by_ada := {"role": "Row", "attribute_names": ["author", "likes"]}
	strip == {"author"} with input as req("window", by_ada)
	strip == {"author"} with input as req("app", by_ada)
}

test_author_is_kept_where_the_user_is if {
	every state in ["focused", "selected", "contains_selection"] {
		count(strip) == 0 with input as req("app", {"role": "Row", "attribute_names": ["author"], state: true})
	}
}

test_only_author_is_stripped if {
	count(strip) == 0 with input as req("app", {"role": "Row", "attribute_names": ["related", "likes"]})
}

pattern_of(id) := [r.pattern | some r in redact; r.id == id][0]

test_credentials_in_text_are_matched if {
	every text in [
		"DB_PASSWORD=hunter22", `"api_key": "abc def"`, "password = 'p4ss w0rd'", "?access_token=abcd1234",
		"Passcode: 482913", "GITHUB_TOKEN=abcd1234efgh", "dbPassword=hunter22", "MYSQLPWD=hunter22",
		"userPin: 4821", "private_key=abcd1234efgh", "bearer_token: abcd1234efgh",
	] {
		some id in ["credential-assignment", "token-assignment"]
		regex.match(pattern_of(id), text)
	}
	regex.match(pattern_of("url-credentials"), "postgres://app:hunter22@db/x")
	regex.match(pattern_of("basic-auth"), "Authorization: Basic YWxhZGRpbjpvcGVu")
}

test_prose_about_credentials_is_not_matched if {
	every text in [
		"Forgot password? Reset it", "The password must be long", "ssh://git@github.com/x", "Basic settings",
		"max_token: 4096", "Tokens: 1234", "Key: value", "Pin: Home", "PIN: 37.7749",
	] {
		every id in ["credential-assignment", "token-assignment", "url-credentials", "basic-auth"] {
			not regex.match(pattern_of(id), text)
		}
	}
}
