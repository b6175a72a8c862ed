package ctxgate

mask contains "secure-text" if {
	input.element.role == "Text"

keep contains "focus-path" if input.element.focused
