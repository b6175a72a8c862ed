# A test policy: denies an Application whose subrole is `vault`, masks one
# whose subrole is `locked`, keeps the focus path, app scope.
package ctxgate

# METADATA
# title: App scope
# description: Always the whole app.
scope := "app"

# METADATA
# title: Deny vault apps
# description: Nothing of a vault app is sent.
deny contains "vault-app" if {
	input.element.role == "Application"
	input.element.subrole == "vault"
}

# METADATA
# title: Mask locked apps
# description: A locked app is sent as a placeholder.
mask contains "locked-app" if {
	input.element.role == "Application"
	input.element.subrole == "locked"
}

# METADATA
# title: Keep the focus path
# description: Focused elements.
keep contains "focus-path" if {
	input.element.focused
}
