# A test layer for tests/explain_browser.rs, loaded over policies/default.rego:
# denies an element whose subrole is `deny-canary` and masks one whose subrole
# is `mask-canary` (the test marks the elements it wants withheld with them).
package ctxgate

# METADATA
# title: Deny marked elements
# description: An element the test marks is never sent, nor anything inside it.
deny contains "marked" if {
	input.element.subrole == "deny-canary"
}

# METADATA
# title: Mask marked elements
# description: An element the test marks is sent as a placeholder.
mask contains "marked" if {
	input.element.subrole == "mask-canary"
}
