# A test policy: denies private vaults, keeps the focus path, focus scope.
package ctxgate

# METADATA
# title: Focus scope
# description: Always the focus scope.
scope := "focus"

# METADATA
# title: Deny private vaults
# description: Nothing in a private vault is sent.
deny contains "private-vault" if {
	input.element.subrole == "private-vault"
}

# METADATA
# title: Keep the focus path
# description: Focused elements.
keep contains "focus-path" if {
	input.element.focused
}
